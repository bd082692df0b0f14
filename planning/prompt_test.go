package planning

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

func TestRenderPrompt(t *testing.T) {
	tests := []struct {
		name      string
		todos     []Todo
		wantLines []string
		absent    []string
	}{
		{
			name: "list",
			todos: []Todo{
				{"Understand the customer request", Completed, ""},
				{"Check account context", InProgress, ""},
				{"Write the final response", Pending, ""},
			},
			wantLines: []string{
				"## Planning",
				"Current plan:",
				"- [completed] Understand the customer request",
				"- [in_progress] Check account context",
				"- [pending] Write the final response",
			},
			absent: []string{"plan is empty"},
		},
		{
			name:      "empty",
			todos:     []Todo{},
			wantLines: []string{"## Planning", "Current plan:", "(The plan is empty. If the task has several steps, write a plan with writeTodos first.)"},
		},
		{name: "nil", todos: nil, wantLines: []string{"Current plan:", "(The plan is empty. If the task has several steps, write a plan with writeTodos first.)"}},
		{
			name:      "line breaks in content stay on one line",
			todos:     []Todo{{"first\nsecond\r\nthird", Pending, ""}},
			wantLines: []string{"- [pending] first second  third"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderPrompt(tt.todos)
			lines := strings.Split(got, "\n")
			for _, want := range tt.wantLines {
				if !contains(lines, want) {
					t.Errorf("prompt has no line %q:\n%s", want, got)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(got, s) {
					t.Errorf("prompt contains %q:\n%s", s, got)
				}
			}
			checkInstructions(t, got)
			// Only todo lines start with "- [": the offline model reads them.
			if n := todoLines(lines); n != len(tt.todos) {
				t.Errorf("%d lines start with %q, want %d", n, "- [", len(tt.todos))
			}
		})
	}
}

// checkInstructions checks that the prompt says how to use writeTodos,
// whatever the list.
func checkInstructions(t *testing.T, prompt string) {
	t.Helper()
	for _, word := range []string{"writeTodos", "whole list", "in_progress", "completed"} {
		if !strings.Contains(prompt, word) {
			t.Errorf("instructions do not mention %q", word)
		}
	}
}

// todoLines counts the lines that start with "- [", as todo lines do.
func todoLines(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "- [") {
			n++
		}
	}
	return n
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func TestPromptReadsState(t *testing.T) {
	seed := []Todo{{"seed item", Pending, ""}}
	render := statePrompt(seed)
	tests := []struct {
		name  string
		state thread.State
		want  string
		not   string
	}{
		{"state list", thread.State{StateField: json.RawMessage(`[{"content":"from state","status":"in_progress"}]`)}, "- [in_progress] from state", "seed item"},
		{"state empty", thread.State{StateField: json.RawMessage(`[]`)}, "plan is empty", "seed item"},
		{"no field falls back to seed", thread.State{}, "- [pending] seed item", ""},
		{"nil state", nil, "- [pending] seed item", ""},
		{"unreadable field falls back to seed", thread.State{StateField: json.RawMessage(`"oops"`)}, "- [pending] seed item", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.state)
			if !strings.Contains(got, tt.want) {
				t.Errorf("prompt does not contain %q:\n%s", tt.want, got)
			}
			if tt.not != "" && strings.Contains(got, tt.not) {
				t.Errorf("prompt contains %q:\n%s", tt.not, got)
			}
		})
	}
}

// TestPlanningOverheadPerRequest: what planning adds to every model request
// (the prompt section with the workload's 4-item plan, writeTodos's
// description and schema) stays within a budget, and each rule is said
// once: the tool description says what the tool does, the prompt how to use
// it. Dawn's whole first request of the same workload is 1.3 KB.
func TestPlanningOverheadPerRequest(t *testing.T) {
	todos := []Todo{
		{"Understand the customer request", Pending, ""},
		{"Check account context", Pending, ""},
		{"Decide whether to answer or escalate", Pending, ""},
		{"Write the final response", Pending, ""},
	}
	spec := Tool().Spec()
	prompt := RenderPrompt(todos)
	total := len(prompt) + len(spec.Description) + len(spec.Schema)
	const budget = 900
	if total > budget {
		t.Errorf("planning adds %d bytes to each request (prompt %d, description %d, schema %d), budget %d",
			total, len(prompt), len(spec.Description), len(spec.Schema), budget)
	}
	for _, rule := range []string{"whole list", "in_progress"} {
		if n := strings.Count(prompt+spec.Description, rule); n > 1 {
			t.Errorf("%q is said %d times across the prompt and the tool description", rule, n)
		}
	}
}

// TestPromptRendersEachStateOnce: the plan is rendered again only when the
// state's todos change. Every model call of a run renders the state block,
// and most calls see a list seen before (each thread of a route starts
// from the same plan); a state seen before costs no decoding and no
// allocation, and a changed one renders anew.
func TestPromptRendersEachStateOnce(t *testing.T) {
	render := statePrompt([]Todo{{"seed item", Pending, ""}})
	first := thread.State{StateField: json.RawMessage(`[{"content":"Check account context","status":"in_progress"}]`)}
	want := render(first)
	if allocs := testing.AllocsPerRun(100, func() {
		if got := render(first); got != want {
			t.Fatalf("render changed: %q, want %q", got, want)
		}
	}); allocs != 0 {
		t.Errorf("rendering a state seen before allocates %v times", allocs)
	}
	changed := thread.State{StateField: json.RawMessage(`[{"content":"Check account context","status":"completed"}]`)}
	if got := render(changed); !strings.Contains(got, "- [completed] Check account context") {
		t.Errorf("changed state rendered as:\n%s", got)
	}
	if got := render(first); got != want {
		t.Errorf("first state again: %q, want %q", got, want)
	}
}
