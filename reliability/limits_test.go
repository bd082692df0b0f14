package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/stream"
)

// limitsYAML sets every limit small, so each test can go over one.
const limitsYAML = `limits:
  body_bytes: 2048
  message_bytes: 100
  max_turns: 3
  subagent_depth: 1
  tool_output_bytes: 1000
  todos: 3
  todo_bytes: 40
`

// limitsApp is an app with the small limits: a planning route, a route
// with two levels of subagents, and a plain route.
func limitsApp(t *testing.T) string {
	return writeApp(t, map[string]string{
		"dawn.yaml":                   limitsYAML,
		"plan/agent.md":               "---\nmax_turns: 5\n---\nPlans.",
		"plan/plan.md":                "- [ ] First\n",
		"lead/agent.md":               "Delegates.",
		"lead/subagents/mid/agent.md": "Delegates again.",
		"lead/subagents/mid/subagents/leaf/agent.md": "Does the work.",
		"plain/agent.md": "Answers.",
	})
}

// bigTool returns n bytes of text, to go over tool_output_bytes.
func bigTool(n int) capabilities.AppTool {
	type in struct{}
	return capabilities.AppTool{Tool: capabilities.Func("big", "Returns a lot of text.", func(context.Context, in) (string, error) {
		return strings.Repeat("a", n), nil
	})}
}

// serveLimits serves the limits app in-process on model.
func serveLimits(t *testing.T, model *dawntest.ScriptedModel) *client {
	t.Helper()
	h := dawntest.New(t, limitsApp(t), model, dawntest.Options{Tools: []capabilities.AppTool{bigTool(5000)}})
	c := newClient(h.URL)
	t.Cleanup(c.close)
	return c
}

// streamRun posts a runs/stream and returns its events.
func streamRun(t *testing.T, c *client, thread, route, text string) []stream.Event {
	t.Helper()
	r := c.must(t, http.MethodPost, "/threads/"+thread+"/runs/stream", runBody(route, text))
	if r.status != http.StatusOK {
		t.Fatalf("runs/stream: %d %s", r.status, r.body)
	}
	events, err := readEvents(strings.NewReader(string(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[len(events)-1].Type != stream.TypeDone {
		t.Fatalf("stream does not end with done: %v", dawntest.Types(events))
	}
	return events
}

// toolErrors returns the error of every tool_result event of type typ.
func toolErrors(events []stream.Event, typ string) []string {
	var out []string
	for _, e := range events {
		if e.Type != typ {
			continue
		}
		var r struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(e.Data, &r)
		out = append(out, r.Error)
	}
	return out
}

func TestLimitBodyBytes(t *testing.T) {
	c := serveLimits(t, dawntest.Script().Reply("ok").Repeat())
	big := runBody("/plain", strings.Repeat("x", 3000))
	cases := []struct {
		name, method, path string
		body               io.Reader
	}{
		{"runs/wait with Content-Length", http.MethodPost, "/threads/b1/runs/wait", strings.NewReader(string(big))},
		{"runs/stream chunked", http.MethodPost, "/threads/b2/runs/stream", io.MultiReader(strings.NewReader(string(big)))},
		{"threads", http.MethodPost, "/threads", strings.NewReader(`{"metadata":{"a":"` + strings.Repeat("y", 3000) + `"}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, c.base+tc.path, tc.body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			e := errorOf(t, reply{status: resp.StatusCode, body: data})
			if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Kind != "body_too_large" || !strings.Contains(e.Error.Message, "limits.body_bytes") {
				t.Fatalf("%d %s, want 413 body_too_large naming limits.body_bytes", resp.StatusCode, data)
			}
		})
	}
	if r := c.must(t, http.MethodPost, "/threads/b3/runs/wait", runBody("/plain", "small")); r.status != http.StatusOK {
		t.Fatalf("a body under the limit: %d %s", r.status, r.body)
	}
}

func TestLimitMessageBytes(t *testing.T) {
	c := serveLimits(t, dawntest.Script().Reply("ok").Repeat())
	r := c.must(t, http.MethodPost, "/threads/m1/runs/wait", runBody("/plain", strings.Repeat("é", 51)))
	e := errorOf(t, r)
	if r.status != http.StatusBadRequest || e.Error.Kind != "invalid_input" || !strings.Contains(e.Error.Message, "limits.message_bytes") || !strings.Contains(e.Error.Message, "102 bytes") {
		t.Fatalf("%d %s, want 400 invalid_input naming 102 bytes and limits.message_bytes", r.status, r.body)
	}
	if r := c.must(t, http.MethodPost, "/threads/m2/runs/wait", runBody("/plain", strings.Repeat("x", 100))); r.status != http.StatusOK {
		t.Fatalf("a message at the limit: %d %s", r.status, r.body)
	}
}

func TestLimitTodos(t *testing.T) {
	item := func(s string) map[string]string { return map[string]string{"content": s, "status": "pending"} }
	ok40 := strings.Repeat("b", 40)
	model := dawntest.Script().
		CallTool("writeTodos", map[string]any{"todos": []any{item("1"), item("2"), item("3"), item("4")}}).
		CallTool("writeTodos", map[string]any{"todos": []any{item(strings.Repeat("a", 41))}}).
		CallTool("writeTodos", map[string]any{"todos": []any{item(ok40), item("2"), item("3")}}).
		Reply("done")
	c := serveLimits(t, model)
	events := streamRun(t, c, "td", "/plan", "plan")
	if done := events[len(events)-1].Data; strings.Contains(string(done), `"error"`) {
		t.Fatalf("the run failed: %s", done)
	}
	errs := toolErrors(events, stream.TypeToolResult)
	want := []string{"todos has 4 items, over the limit of 3", "todos[0].content is 41 bytes, over the limit of 40 bytes", ""}
	if len(errs) != len(want) {
		t.Fatalf("tool_result errors = %q, want %d results", errs, len(want))
	}
	for i, w := range want {
		if w == "" && errs[i] != "" || !strings.Contains(errs[i], w) {
			t.Errorf("tool_result %d error = %q, want one containing %q", i, errs[i], w)
		}
	}
	var s threadState
	c.getJSON(t, "/threads/td/state", &s)
	if !sameTodos(s.Values.Todos, json.RawMessage(`[{"content":"`+ok40+`","status":"pending"},{"content":"2","status":"pending"},{"content":"3","status":"pending"}]`)) {
		t.Errorf("todos = %s: only the valid call may change them", s.Values.Todos)
	}
}

func TestLimitToolOutputBytes(t *testing.T) {
	c := serveLimits(t, dawntest.Script().CallTool("big", nil).Reply("done"))
	streamRun(t, c, "out", "/plain", "big")
	var s threadState
	c.getJSON(t, "/threads/out/state", &s)
	var tool *message
	for i, m := range s.Values.Messages {
		if m.Role == "tool" {
			tool = &s.Values.Messages[i]
		}
	}
	if tool == nil {
		t.Fatalf("no tool message in %+v", s.Values.Messages)
	}
	const note = "\n[output truncated: 1000 of 5000 bytes shown]"
	if tool.Content != strings.Repeat("a", 1000)+note {
		t.Errorf("tool message is %d bytes ending %q, want 1000 bytes and the note %q", len(tool.Content), tool.Content[max(0, len(tool.Content)-60):], note)
	}
}

func TestLimitMaxTurns(t *testing.T) {
	model := dawntest.Script().CallTool("big", nil).Repeat()
	c := serveLimits(t, model)
	r := c.must(t, http.MethodPost, "/threads/turns/runs/wait", runBody("/plain", "loop"))
	e := errorOf(t, r)
	if e.Error.Kind != "turn_limit" || !strings.Contains(e.Error.Message, "3 turns") || !strings.Contains(e.Error.Message, "max_turns") {
		t.Fatalf("%d %s, want a turn_limit error naming 3 turns and max_turns", r.status, r.body)
	}
	if model.Calls() != 3 {
		t.Errorf("the model was called %d times, want 3", model.Calls())
	}
	var runs []runRecord
	c.getJSON(t, "/threads/turns/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "error" || !strings.Contains(runs[0].Error, "max_turns") {
		t.Errorf("runs = %+v, want one error run naming max_turns", runs)
	}
}

func TestLimitSubagentDepth(t *testing.T) {
	model := dawntest.Script().
		CallTool("task", map[string]string{"subagent": "mid", "input": "go deeper"}).
		CallTool("task", map[string]string{"subagent": "leaf", "input": "deepest"}).
		Reply("mid gave up").
		Reply("lead done")
	c := serveLimits(t, model)
	events := streamRun(t, c, "depth", "/lead", "delegate")
	if errs := toolErrors(events, stream.TypeToolResult); len(errs) != 1 || errs[0] != "" {
		t.Errorf("lead's task results = %q, want one success", errs)
	}
	errs := toolErrors(events, stream.SubagentPrefix+stream.TypeToolResult)
	if len(errs) != 1 || !strings.Contains(errs[0], `subagent "leaf" not started`) || !strings.Contains(errs[0], "depth limit of 1") {
		t.Fatalf("mid's task results = %q, want one refusing leaf at the depth limit of 1", errs)
	}
	if model.Calls() != 4 {
		t.Errorf("the model was called %d times, want 4 (leaf never ran)", model.Calls())
	}
}

// TestOneRunPerThread holds a run in flight: another run, a stream or a
// delete on the same thread get 409 run_in_flight; other threads run.
func TestOneRunPerThread(t *testing.T) {
	release := make(chan struct{})
	model := dawntest.Script().Wait(release).Reply("first").Reply("second").Reply("other")
	c := serveLimits(t, model)
	first := make(chan []stream.Event, 1)
	go func() {
		r, err := c.do(http.MethodPost, "/threads/busy/runs/stream", runBody("/plain", "one"))
		if err != nil || r.status != http.StatusOK {
			first <- nil
			return
		}
		events, _ := readEvents(strings.NewReader(string(r.body)))
		first <- events
	}()
	deadline := time.Now().Add(10 * time.Second)
	for model.Calls() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first run did not reach the model within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	for _, req := range []struct{ method, path string }{
		{http.MethodPost, "/threads/busy/runs/wait"},
		{http.MethodPost, "/threads/busy/runs/stream"},
		{http.MethodDelete, "/threads/busy"},
	} {
		var body []byte
		if req.method == http.MethodPost {
			body = runBody("/plain", "two")
		}
		r := c.must(t, req.method, req.path, body)
		if e := errorOf(t, r); r.status != http.StatusConflict || e.Error.Kind != "run_in_flight" {
			t.Errorf("%s %s while a run is in flight: %d %s, want 409 run_in_flight", req.method, req.path, r.status, r.body)
		}
	}
	close(release)
	events := <-first
	if len(events) == 0 || events[len(events)-1].Type != stream.TypeDone {
		t.Fatalf("the first run's stream = %v, want it to end with done", dawntest.Types(events))
	}
	// The runner frees the thread before it publishes done, so the next
	// run is accepted at once.
	if r := c.must(t, http.MethodPost, "/threads/busy/runs/wait", runBody("/plain", "again")); r.status != http.StatusOK {
		t.Fatalf("a run right after the first's done: %d %s", r.status, r.body)
	}
}

// TestLimitsAreChecked runs `dawn check` on a dawn.yaml with a negative
// limit and an unknown key: each problem names the file and the key.
func TestLimitsAreChecked(t *testing.T) {
	cases := map[string]string{
		"limits:\n  body_bytes: -1\n":    "limits.body_bytes is -1",
		"limits:\n  max_turns: -5\n":     "limits.max_turns is -5",
		"limits:\n  request_bytes: 10\n": "request_bytes",
	}
	for yaml, want := range cases {
		dir := writeApp(t, map[string]string{"dawn.yaml": yaml, "a/agent.md": "A."})
		out, err := exec.Command(dawnBin, "check", "--app", dir).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("dawn check on %q: %v, want exit 1\n%s", yaml, err, out)
		}
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "dawn.yaml") {
			t.Errorf("dawn check on %q printed %q, want the file and %q", yaml, out, want)
		}
	}
}
