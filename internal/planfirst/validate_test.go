package planfirst

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestValidateProblems(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  []string // exactly the problems, in order
	}{
		{"no steps", nil, []string{"no steps; return at least one step"}},
		{"duplicate id", []Step{{ID: "E1", Task: "a"}, {ID: "E1", Task: "b"}},
			[]string{`step 2: id "E1" is used twice; ids must be unique`}},
		{"empty id and task", []Step{{ID: "", Task: " "}},
			[]string{"step 1: id is empty; give every step an id like E1", "step 1: task is empty; say what the step must do"}},
		{"bad ids", []Step{{ID: "1a", Task: "a"}, {ID: "E-", Task: "b"}, {ID: strings.Repeat("x", 33), Task: "c"}, {ID: "a b", Task: "d"}},
			[]string{
				`step 1: id "1a" is not valid; use a letter, then letters, digits, _ or -, at most 32 characters, like E1`,
				`step 2: id "E-" is not valid; use a letter, then letters, digits, _ or -, at most 32 characters, like E2`,
				`step 3: id "` + strings.Repeat("x", 33) + `" is not valid; use a letter, then letters, digits, _ or -, at most 32 characters, like E3`,
				`step 4: id "a b" is not valid; use a letter, then letters, digits, _ or -, at most 32 characters, like E4`,
			}},
		{"dep on a later step", []Step{{ID: "E1", Task: "a", Deps: []string{"E2"}}, {ID: "E2", Task: "b"}},
			[]string{`step 1 (E1): deps names "E2", which is not an earlier step`}},
		{"dep unknown", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b"}, {ID: "E3", Task: "c", Deps: []string{"E9"}}},
			[]string{`step 3 (E3): deps names "E9", which is not an earlier step`}},
		{"dep on itself", []Step{{ID: "E1", Task: "a", Deps: []string{"E1"}}},
			[]string{"step 1 (E1): deps names the step itself; list only earlier steps"}},
		{"cycle is impossible", []Step{{ID: "A", Task: "a", Deps: []string{"B"}}, {ID: "B", Task: "b", Deps: []string{"A"}}},
			[]string{`step 1 (A): deps names "B", which is not an earlier step`}},
		{"both targets", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b", Route: "/r", Subagent: "s"}},
			[]string{"step 2 (E2): both route and subagent are set; pick one"}},
		{"placeholder undeclared", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b"}, {ID: "E3", Task: "c"}, {ID: "E4", Task: "use #E7"}},
			[]string{"step 4 (E4): task references #E7, which is not declared before it"}},
		{"placeholder to a later step", []Step{{ID: "fetch", Task: "use #report"}, {ID: "report", Task: "b"}},
			[]string{"step 1 (fetch): task references #report, which is not declared before it"}},
		{"placeholder to itself", []Step{{ID: "E1", Task: "use #E1.summary"}},
			[]string{"step 1 (E1): task references #E1, the step itself; a step can only use earlier steps' outputs"}},
		{"unknown form", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "use #E1.foo now"}},
			[]string{"step 2 (E2): task has #E1.foo, which is not a placeholder form; use #E1, #E1.summary, #E1.head=N or #E1.last=N"}},
		{"head without count", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "use #E1.head"}},
			[]string{"step 2 (E2): task has #E1.head without a count; write it like #E1.head=200"}},
		{"count zero", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "use #E1.last=0"}},
			[]string{"step 2 (E2): task has #E1.last=0, whose count must be between 1 and 100000"}},
		{"count too big", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "use #E1.head=100001"}},
			[]string{"step 2 (E2): task has #E1.head=100001, whose count must be between 1 and 100000"}},
		{"unended placeholder", []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "a #E1-based fix"}},
			[]string{`step 2 (E2): task has "#E1-based", which is not a step id; end the placeholder #E1 with a space or punctuation`}},
		{"several at once", []Step{{ID: "E1", Task: ""}, {ID: "E1", Task: "x", Deps: []string{"E5"}}},
			[]string{"step 1 (E1): task is empty; say what the step must do", `step 2: id "E1" is used twice; ids must be unique`, `step 2 (E1): deps names "E5", which is not an earlier step`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(&Plan{Steps: tt.steps})
			if err == nil {
				t.Fatal("Validate = nil, want problems")
			}
			got := err.(*ValidationError).Problems
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestValidateTooManySteps(t *testing.T) {
	p := numbered(MaxSteps + 1)
	err := Validate(p)
	if err == nil || !strings.Contains(err.Error(), "more than 20 steps (got 21); merge related steps") {
		t.Fatalf("Validate = %v", err)
	}
	if err := Validate(numbered(MaxSteps)); err != nil {
		t.Fatalf("Validate(%d steps) = %v", MaxSteps, err)
	}
}

func TestValidateAcceptsText(t *testing.T) {
	// None of these is a placeholder problem.
	tasks := []string{
		"Summarize #E1.",         // full stop after the id
		"Read #E1. Then fix it.", // sentence goes on
		"Compare #E1.summary, #E1.head=5 and #E1.last=7!",
		"Post it in #general and tag #README", // not ids, not step-shaped
		"Write it in C# and F#",               // '#' after a letter, or alone
		"See issue#E9 and page#E1",            // '#' after a letter
		"Look at #1 and #42",                  // not an id
		"Use #E1.Then continue",               // '.' then capital: punctuation
		"Use #E1- and #E1_ as text",           // trailing '-'/'_' is punctuation
		"Use (#E1) and [#E1.summary]",
	}
	for _, task := range tasks {
		p := &Plan{Steps: []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: task}}}
		if err := Validate(p); err != nil {
			t.Errorf("task %q: %v", task, err)
		}
	}
}

func TestValidateNormalizes(t *testing.T) {
	p := &Plan{Goal: " g ", Steps: []Step{
		{ID: "fetch", Task: "a"},
		{ID: "E2", Task: "b"},
		{ID: "E3", Task: " c from #E2 and #fetch.summary ", Deps: []string{"E2", "E2"}, Route: " /r "},
	}}
	if err := Validate(p); err != nil {
		t.Fatal(err)
	}
	want := &Plan{Goal: "g", Steps: []Step{
		{ID: "fetch", Task: "a"},
		{ID: "E2", Task: "b"},
		{ID: "E3", Task: "c from #E2 and #fetch.summary", Deps: []string{"fetch", "E2"}, Route: "/r"},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("normalized =\n%+v\nwant\n%+v", p, want)
	}
}

func TestValidationErrorText(t *testing.T) {
	one := &ValidationError{Problems: []string{"no steps"}}
	if got := one.Error(); got != "plan is not valid: no steps" {
		t.Errorf("one problem: %q", got)
	}
	two := &ValidationError{Problems: []string{"a", "b"}}
	if got := two.Error(); got != "plan is not valid:\n- a\n- b" {
		t.Errorf("two problems: %q", got)
	}
}

func TestCheckTargets(t *testing.T) {
	p := &Plan{Steps: []Step{{ID: "E1", Task: "a", Route: "/ok"}, {ID: "E2", Task: "b", Subagent: "ghost"}, {ID: "E3", Task: "c", Route: "/nope"}}}
	err := CheckTargets(p, []string{"/ok"}, nil)
	want := []string{
		`step 2 (E2): subagent "ghost" does not exist; use one of: (none; leave it out)`,
		`step 3 (E3): route "/nope" does not exist; use one of: /ok`,
	}
	if err == nil || !reflect.DeepEqual(err.(*ValidationError).Problems, want) {
		t.Errorf("CheckTargets = %v", err)
	}
	if err := CheckTargets(p, []string{"/ok", "/nope"}, []string{"ghost"}); err != nil {
		t.Errorf("CheckTargets with all targets = %v", err)
	}
}

// numbered returns a plan of n independent steps E1..En.
func numbered(n int) *Plan {
	p := &Plan{}
	for i := 1; i <= n; i++ {
		p.Steps = append(p.Steps, Step{ID: fmt.Sprintf("E%d", i), Task: fmt.Sprintf("task %d", i)})
	}
	return p
}
