package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// expectFrom parses one case's expect block.
func expectFrom(t *testing.T, block string) Expect {
	t.Helper()
	src := "cases:\n  - name: c\n    input: {message: hi}\n    expect:\n" + block
	cases, err := Parse("f.yaml", "/r", []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", block, err)
	}
	return cases[0].Expect
}

func TestCheck(t *testing.T) {
	done := []Todo{{"A", "completed"}, {"B", "completed"}}
	open := []Todo{{"A", "completed"}, {"B", "in_progress"}}
	calls := []Call{
		{Name: "writeTodos", Input: json.RawMessage(`{"todos":[]}`)},
		{Name: "lookupAccount", Input: json.RawMessage(`{"email":"ann@acme.com","n":1}`)},
		{Name: "writeTodos", Input: json.RawMessage(`{"todos":[{"content":"A"}]}`)},
	}
	obs := Observation{Answer: "Your account is fine.", Todos: done, Calls: calls, Turns: 4, MaxInputTokens: 900, TokensKnown: true}
	tests := []struct {
		name   string
		expect string
		obs    Observation
		fail   string // the failing expectation and its detail; empty: all pass
	}{
		{"plan completed", "      plan_completed: true\n", obs, ""},
		{"plan open", "      plan_completed: true\n", Observation{Todos: open}, `plan_completed: 1 of 2 plan items are not completed`},
		{"plan empty", "      plan_completed: true\n", Observation{Todos: []Todo{}}, `plan_completed: the final plan is empty`},
		{"no plan", "      plan_completed: true\n", Observation{}, `plan_completed: the route has no plan`},
		{"plan not completed wanted", "      plan_completed: false\n", Observation{Todos: open}, ""},
		{"todos", "      todos: [{content: A, status: completed}, {content: B, status: completed}]\n", obs, ""},
		{"todos differ", "      todos: [{content: A, status: completed}]\n", obs, `todos: the final plan is ["A" completed, "B" completed], want ["A" completed]`},
		{"tools any order", "      tools_called: [lookupAccount, writeTodos]\n", obs, ""},
		{"tools in order", "      tools_called: {in_order: true, calls: [writeTodos, lookupAccount, writeTodos]}\n", obs, ""},
		{"tools out of order", "      tools_called: {in_order: true, calls: [lookupAccount, lookupAccount]}\n", obs, `tools_called: no call after the earlier expected calls matches lookupAccount`},
		{"tool missing", "      tools_called: [task]\n", obs, `tools_called: no call matches task; the calls were writeTodos, lookupAccount, writeTodos`},
		{"args equal", "      tools_called: [{name: lookupAccount, args: {email: ann@acme.com, n: 1}}]\n", obs, ""},
		{"args differ", "      tools_called: [{name: lookupAccount, args: {n: 2}}]\n", obs, `tools_called: no call matches lookupAccount with args {"n":2}`},
		{"args match", "      tools_called: [{name: lookupAccount, args_match: {email: '@acme\\.com$'}}]\n", obs, ""},
		{"args match object", "      tools_called: [{name: writeTodos, args_match: {todos: '\"A\"'}}]\n", obs, ""},
		{"args do not match", "      tools_called: [{name: lookupAccount, args_match: {email: '@globex'}}]\n", obs, `tools_called: no call matches lookupAccount with args matching`},
		{"not called", "      tools_not_called: [task]\n", obs, ""},
		{"called after all", "      tools_not_called: [lookupAccount]\n", obs, `tools_not_called: lookupAccount was called with {"email":"ann@acme.com","n":1}`},
		{"contains", "      answer_contains: [account, fine]\n", obs, ""},
		{"lacks", "      answer_contains: [account, refund]\n", obs, `answer_contains: the answer lacks "refund": "Your account is fine."`},
		{"matches", "      answer_matches: '^Your \\w+ is'\n", obs, ""},
		{"does not match", "      answer_matches: 'refund'\n", obs, `answer_matches: the answer does not match /refund/`},
		{"turns", "      max_turns: 4\n", obs, ""},
		{"too many turns", "      max_turns: 3\n", obs, `max_turns: the run took 4 model turns, over 3`},
		{"tokens", "      max_input_tokens: 900\n", obs, ""},
		{"too many tokens", "      max_input_tokens: 899\n", obs, `max_input_tokens: a model call took 900 input tokens, over 899`},
		{"tokens unknown", "      max_input_tokens: 10\n", Observation{Turns: 1}, `max_input_tokens: the model reported no input token counts`},
		{"run failed", "      max_turns: 9\n", Observation{Err: "model down"}, `run: model down`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var failed []string
			for _, r := range Check(expectFrom(t, tc.expect), tc.obs) {
				if !r.Pass {
					failed = append(failed, r.Expectation+": "+r.Detail)
				}
			}
			got := strings.Join(failed, "\n")
			switch {
			case tc.fail == "" && got != "":
				t.Errorf("failed: %s", got)
			case tc.fail != "" && !strings.HasPrefix(got, tc.fail):
				t.Errorf("failures = %q\nwant one starting %q", got, tc.fail)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	events := []stream.Event{
		stream.New(stream.TypeModelCall, map[string]any{"model": "m", "input_tokens": 50}),
		stream.New(stream.TypeToolCall, map[string]any{"id": "1", "name": "writeTodos", "input": map[string]any{"todos": []any{}}}),
		stream.New("subagent.tool_call", map[string]any{"call_id": "1", "tool": "lookupAccount"}),
		stream.New(stream.TypeModelCall, map[string]any{"model": "m", "input_tokens": 80}),
		stream.New(stream.TypeDone, map[string]any{"output": map[string]any{
			"messages": []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Done."}, {"role": "assistant", "content": ""}},
			"todos":    []map[string]any{{"content": "A", "status": "completed"}},
		}}),
	}
	o := Observe(events)
	if o.Answer != "Done." || o.Turns != 2 || o.MaxInputTokens != 80 || !o.TokensKnown || len(o.Calls) != 1 || len(o.Todos) != 1 || o.Err != "" {
		t.Errorf("Observe = %+v", o)
	}
	failed := Observe([]stream.Event{stream.New(stream.TypeDone, map[string]any{"output": map[string]any{"error": "boom"}})})
	if failed.Err != "boom" || failed.Todos != nil {
		t.Errorf("Observe of a failed run = %+v", failed)
	}
	fromEvents := Observe([]stream.Event{
		stream.New("plan_update", map[string]any{"todos": []map[string]any{{"content": "A", "status": "pending"}}}),
		stream.New("plan_update", map[string]any{"todos": []map[string]any{{"content": "A", "status": "completed"}}}),
		stream.New(stream.TypeDone, map[string]any{"output": map[string]any{"messages": []any{}}}),
	})
	if len(fromEvents.Todos) != 1 || fromEvents.Todos[0].Status != "completed" {
		t.Errorf("without todos in the final state, the plan is %v; want the last plan_update's", fromEvents.Todos)
	}
	empty := Observe([]stream.Event{stream.New(stream.TypeDone, map[string]any{"output": map[string]any{"todos": []any{}}})})
	if empty.Todos == nil || len(empty.Todos) != 0 {
		t.Errorf("an empty plan reads as %#v, want an empty list", empty.Todos)
	}
}

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		text  string
		score float64
		bad   string
	}{
		{`{"score": 0.9, "reason": "ok"}`, 0.9, ""},
		{"```json\n{\"score\": 1, \"reason\": \"fine\"}\n```", 1, ""},
		{`I think 0.5`, 0, `the judge's reply is not {"score"`},
		{`{"reason": "no score"}`, 0, `the judge's reply is not {"score"`},
		{`{"score": 7}`, 0, "the judge's score 7 is not from 0 to 1"},
	}
	for _, tc := range tests {
		v, err := parseVerdict(tc.text)
		switch {
		case tc.bad == "" && (err != nil || *v.Score != tc.score):
			t.Errorf("parseVerdict(%q) = %v, %v; want score %v", tc.text, v, err, tc.score)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("parseVerdict(%q) err = %v, want %s", tc.text, err, tc.bad)
		}
	}
}
