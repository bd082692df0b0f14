package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/planfirst"
)

// chatBody is a chat completion request whose messages alternate system,
// then the given user texts (each as a plain string or as content parts).
func chatBody(t *testing.T, parts bool, users ...string) []byte {
	t.Helper()
	msgs := []any{map[string]any{"role": "system", "content": "You do each task you are given."}}
	for i, u := range users {
		if i > 0 {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "ok"})
		}
		var content any = u
		if parts {
			content = []any{map[string]string{"type": "text", "text": u}}
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": content})
	}
	b, err := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClassifyDiamond: the mock tells plan-first's requests apart by the
// last user message, built here with planfirst's own Directive and Report:
// the planning directive, each step's resolved task (with its id), and the
// report asking for the final answer, which quotes the step tasks and so
// must not count as a step.
func TestClassifyDiamond(t *testing.T) {
	plan, err := planfirst.Parse(diamondPlan)
	if err != nil {
		t.Fatalf("the mock's plan does not parse: %v", err)
	}
	report := planfirst.Report{Goal: plan.Goal}
	for _, s := range plan.Steps {
		task := planfirst.Resolve(s.Task, map[string]planfirst.Output{"A": {Text: "Result of step A."}, "B": {Text: "Result of step B."}, "C": {Text: "Result of step C."}})
		report.Steps = append(report.Steps, planfirst.StepResult{Step: s, Task: task, Status: planfirst.Completed, Output: "Result of step " + s.ID + "."})
	}
	user := "Check the facts in two halves and combine them."
	type want struct{ kind, step string }
	cases := []struct {
		name  string
		users []string
		want  want
	}{
		{"planner", []string{planfirst.Directive(user, nil, nil)}, want{reqPlanner, ""}},
		{"answer", []string{user, report.Text()}, want{reqAnswer, ""}},
		{"other", []string{user}, want{reqOther, ""}},
	}
	for _, r := range report.Steps {
		cases = append(cases, struct {
			name  string
			users []string
			want  want
		}{"step " + r.Step.ID, []string{r.Task}, want{reqStep, r.Step.ID}})
	}
	for _, parts := range []bool{false, true} {
		for _, c := range cases {
			kind, step, err := classifyDiamond(chatBody(t, parts, c.users...))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if (want{kind, step}) != c.want {
				t.Errorf("%s (parts %v): got %s %q, want %s %q", c.name, parts, kind, step, c.want.kind, c.want.step)
			}
		}
	}
	if _, _, err := classifyDiamond([]byte("not json")); err == nil {
		t.Error("a body that is not JSON classified without an error")
	}
}

// TestDiamondPlanShape: the planner's plan is the diamond (B and C after A
// only, D after both), so parallel 2 can run B and C together.
func TestDiamondPlanShape(t *testing.T) {
	plan, err := planfirst.Parse(diamondPlan)
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	for _, s := range plan.Steps {
		d := slices.Clone(s.Deps)
		slices.Sort(d)
		deps[s.ID] = d
	}
	want := map[string][]string{"A": nil, "B": {"A"}, "C": {"A"}, "D": {"B", "C"}}
	for id, w := range want {
		if !slices.Equal(deps[id], w) {
			t.Errorf("step %s deps %v, want %v", id, deps[id], w)
		}
	}
	if len(deps) != 4 {
		t.Errorf("plan has %d steps, want 4", len(deps))
	}
}

func TestDiamondIdealAndParallelList(t *testing.T) {
	for p, want := range map[int]time.Duration{1: 4 * time.Second, 2: 3 * time.Second, 4: 3 * time.Second} {
		if got := diamondIdeal(p, time.Second); got != want {
			t.Errorf("ideal with parallel %d = %v, want %v", p, got, want)
		}
	}
	got, err := parseParallelList("1, 2,2")
	if err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Errorf("parseParallelList(1, 2,2) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "17", "1,x"} {
		if _, err := parseParallelList(bad); err == nil {
			t.Errorf("parseParallelList(%q) accepted", bad)
		}
	}
}

func TestParseDiamondFlags(t *testing.T) {
	o, err := parseFlags([]string{"--diamond", "--repeat", "3"})
	if err != nil || !o.diamond || o.stepLatency != time.Second || o.parallel != "1,2" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	for args, want := range map[string][]string{
		"positive --step-latency": {"--diamond", "--step-latency", "0s"},
		"no --url":                {"--diamond", "--url", "http://127.0.0.1:8000"},
		"from 1 to 16":            {"--diamond", "--parallel", "1,32"},
	} {
		if _, err := parseFlags(want); err == nil || !strings.Contains(err.Error(), args) {
			t.Errorf("%v: error %v, want one containing %q", want, err, args)
		}
	}
}
