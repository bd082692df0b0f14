package eval

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// failures runs Check and returns each failing expectation with its
// detail.
func failures(e Expect, o Observation) []string {
	var out []string
	for _, r := range Check(e, o) {
		if !r.Pass {
			out = append(out, r.Expectation+": "+r.Detail)
		}
	}
	return out
}

func TestCheckInterrupts(t *testing.T) {
	parked := Observation{Parked: true, Interrupts: []Interrupt{{ID: "perm-1", Kind: "tool", Name: "issueRefund"}}}
	answered := Observation{Answer: "Refunded.", Interrupts: []Interrupt{{ID: "perm-1", Kind: "tool", Name: "issueRefund", Answered: "approve"}}}
	tests := []struct {
		name, expect string
		obs          Observation
		fail         string
	}{
		{"parked as expected", "      interrupt: {kind: tool, name: issueRefund}\n", parked, ""},
		{"parked by kind", "      interrupt: {kind: tool}\n", parked, ""},
		{"answered and expected", "      interrupt: {kind: tool, name: issueRefund}\n      answer_contains: [Refunded]\n", answered, ""},
		{"parked unexpected", "      answer_contains: [x]\n", parked, "run: the run parked on interrupt tool issueRefund, waiting for a person's decision; answer it with answers:"},
		{"other name", "      interrupt: {kind: tool, name: deploy}\n", parked, "run: the run parked on interrupt tool issueRefund"},
		{"no interrupt", "      interrupt: {kind: tool}\n", Observation{Answer: "hi"}, "interrupt: the run parked on no interrupt, want tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(failures(expectFrom(t, tc.expect), tc.obs), "\n")
			switch {
			case tc.fail == "" && got != "":
				t.Errorf("failed: %s", got)
			case tc.fail != "" && !strings.HasPrefix(got, tc.fail):
				t.Errorf("failures = %q\nwant one starting %q", got, tc.fail)
			}
		})
	}
}

// TestCheckFailedRunChecksNothingElse: a run that failed says so on each
// expectation rather than blaming the route ("the route has no plan").
func TestCheckFailedRunChecksNothingElse(t *testing.T) {
	got := failures(expectFrom(t, "      plan_completed: true\n      todos: []\n      answer_contains: [x]\n"), Observation{Err: "model offline: down"})
	want := []string{"run: model offline: down", "plan_completed: not checked: the run failed", "todos: not checked: the run failed", "answer_contains: not checked: the run failed"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestClipKeepsCharactersWhole: a long answer is cut between characters.
func TestClipKeepsCharactersWhole(t *testing.T) {
	answer := strings.Repeat("é", 150) // 300 bytes: byte 200 falls inside none, 199 inside one
	for _, s := range []string{answer, "a" + answer} {
		got := clip(s)
		if strings.Contains(got, `\x`) || !utf8.ValidString(got) {
			t.Errorf("clip cut a character: %s", got)
		}
	}
}

func TestParseAnswersAndModel(t *testing.T) {
	src := `model: script:turns.yaml
cases:
  - name: approve
    input: {message: hi}
    answers:
      - {kind: tool, name: issueRefund, decision: approve}
      - {kind: tool, decision: edit, args: {amount: 5}}
      - {kind: plan, decision: edit, payload: {decision: edit, todos: []}}
    expect: {interrupt: {kind: tool, name: issueRefund}}
  - name: own model
    model: offline
    input: {message: hi}
    expect: {answer_contains: [hi]}
`
	cases, err := Parse("/app/r/evals/f.yaml", "/r", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if cases[0].Model != "script:/app/r/evals/turns.yaml" || cases[1].Model != "offline" {
		t.Errorf("models = %q, %q", cases[0].Model, cases[1].Model)
	}
	a := cases[0].Answers
	if len(a) != 3 || a[0].Name != "issueRefund" || a[0].Decision != "approve" || string(a[1].Args) != `{"amount":5}` {
		t.Fatalf("answers = %+v", a)
	}
	in := Interrupt{Kind: "tool", Name: "issueRefund"}
	for _, tc := range []struct {
		a    Answer
		in   Interrupt
		want string
	}{
		{a[0], in, `"once"`},
		{Answer{Decision: "deny"}, in, `"deny"`},
		{a[1], in, `{"args":{"amount":5},"decision":"edit"}`},
		{Answer{Decision: "approve"}, Interrupt{Kind: "plan"}, `"approve"`},
		{Answer{Decision: "deny"}, Interrupt{Kind: "plan"}, `"reject"`},
		{Answer{Decision: "deny"}, Interrupt{Kind: "step"}, `"cancel"`},
		{a[2], Interrupt{Kind: "plan"}, `{"decision":"edit","todos":[]}`},
	} {
		got, err := tc.a.payload(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("payload(%+v, %s) = %s, %v; want %s", tc.a, tc.in.Kind, got, err, tc.want)
		}
	}
	for _, bad := range []struct{ text, want string }{
		{"answers: [{kind: tool, decision: maybe}]", "answers[0].decision: must be one of approve, deny, edit"},
		{"answers: [{kind: tool, decision: edit}]", "answers[0]: an edit needs args"},
		{"answers: [{decision: approve}]", "answers[0].kind: is missing"},
		{"model: nosuch:x", "model: model \"nosuch:x\": unknown provider"},
	} {
		src := "cases:\n  - name: c\n    input: {message: hi}\n    expect: {max_turns: 1}\n    " + bad.text + "\n"
		if _, err := Parse("f.yaml", "/r", []byte(src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.text, err, bad.want)
		}
	}
}
