package planfirst

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/thread"
)

func samplePlan(t testing.TB) *Plan {
	return mustPlan(t,
		Step{ID: "E1", Task: "Research the market", Subagent: "researcher"},
		Step{ID: "E2", Task: "FAIL draft from #E1.summary", Route: "/writer"},
		Step{ID: "E3", Task: "Review #E2"},
		Step{ID: "E4", Task: "ship"},
	)
}

func TestReportText(t *testing.T) {
	p := samplePlan(t)
	r := Execute(context.Background(), p, echoRunner, func(ev Event) error {
		if ev.StepID == "E4" && ev.Status == InProgress {
			return ErrStop
		}
		return nil
	})
	want := `Plan-first results: 4 steps, 2 completed, 1 failed, 1 skipped.
Goal: g

## Step 1 of 4: E1 (completed)
Task: Research the market
Subagent: researcher
Output:
out:Research the market

## Step 2 of 4: E2 (failed)
Task: FAIL draft from out:Research the market
Route: /writer
Error: it broke

## Step 3 of 4: E3 (completed)
Task: Review [step E2 failed: it broke]
Output:
out:Review [step E2 failed: it broke]

## Step 4 of 4: E4 (skipped)
Task: ship
Not run: stopped between steps

---
The plan stopped before every step ran (stopped between steps); the results so far are above. Now write the final answer to the original request from these results, without running the steps again. Some steps failed: say what could not be done instead of inventing their results. Say what is missing.
`
	if got := r.Text(); got != want {
		t.Errorf("Text =\n%s\nwant\n%s", got, want)
	}
	if again := Execute(context.Background(), p, echoRunner, func(ev Event) error {
		if ev.StepID == "E4" && ev.Status == InProgress {
			return ErrStop
		}
		return nil
	}); again.Text() != want {
		t.Error("Text is not deterministic across runs")
	}
}

func TestReportTextHandoff(t *testing.T) {
	tests := []struct {
		name   string
		report Report
		has    []string
		hasNot []string
	}{
		{"all good", Report{Steps: []StepResult{{Step: Step{ID: "E1", Task: "a"}, Task: "a", Status: Completed, Output: "  "}}},
			[]string{"Plan-first results: 1 step, 1 completed, 0 failed, 0 skipped.", "Output:\n(no output)\n", "Every step of the plan has run"},
			[]string{"Goal:", "failed:", "Say what is missing"}},
		{"long output cut", Report{Steps: []StepResult{{Step: Step{ID: "E1", Task: "a"}, Status: Completed, Output: strings.Repeat("x", ReportOutputLimit+5)}}},
			[]string{strings.Repeat("x", ReportOutputLimit) + "\n… [5 more characters cut]\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.report.Text()
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("Text lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("Text has %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestMessages(t *testing.T) {
	p := samplePlan(t)
	r := Execute(context.Background(), p, echoRunner, nil)
	msgs := Messages(p, r)
	if len(msgs) != 2 || msgs[0].Role != thread.RoleAssistant || msgs[1].Role != thread.RoleUser || !harness.Marked(msgs[0]) || !harness.Marked(msgs[1]) {
		t.Fatalf("messages = %+v", msgs)
	}
	var back Plan
	if err := json.Unmarshal([]byte(msgs[0].Content), &back); err != nil || !reflect.DeepEqual(&back, p) {
		t.Errorf("assistant content is not the plan: %v", err)
	}
	if msgs[1].Content != r.Text() {
		t.Error("user content is not the report")
	}
}

func TestPreview(t *testing.T) {
	p := samplePlan(t)
	want := `Goal: g
Plan: 4 steps (preview, nothing was run)
  1. E1: Research the market
     (subagent researcher)
  2. E2: FAIL draft from #E1.summary
     (after E1; route /writer)
  3. E3: Review #E2
     (after E2)
  4. E4: ship
Order: E1 → E2 → E3 → E4
`
	if got := Preview(p); got != want {
		t.Errorf("Preview =\n%s\nwant\n%s", got, want)
	}
	// Two-digit step numbers stay aligned.
	got := Preview(numbered(12))
	if !strings.Contains(got, "\n   1. E1: task 1\n") || !strings.Contains(got, "\n  12. E12: task 12\n") {
		t.Errorf("Preview of 12 steps:\n%s", got)
	}
	data, err := json.Marshal(PreviewData(p))
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"plan":{"goal":"g","steps":[{"id":"E1","task":"Research the market","subagent":"researcher"},{"id":"E2","task":"FAIL draft from #E1.summary","route":"/writer","deps":["E1"]},{"id":"E3","task":"Review #E2","deps":["E2"]},{"id":"E4","task":"ship"}]},"order":["E1","E2","E3","E4"]}`
	if string(data) != wantJSON {
		t.Errorf("PreviewData JSON =\n%s\nwant\n%s", data, wantJSON)
	}
}

func TestPreviewRunsNothing(t *testing.T) {
	// Preview is a pure rendering: parsing and previewing a plan calls no
	// runner. This is the dry-run path: Parse, then Preview.
	p, err := Parse("```json\n" + `{"steps":[{"id":"E1","task":"a"},{"id":"E2","task":"b #E1"}]}` + "\n```")
	if err != nil {
		t.Fatal(err)
	}
	if got := Preview(p); !strings.HasSuffix(got, "Order: E1 → E2\n") {
		t.Errorf("Preview = %q", got)
	}
}

func TestDirective(t *testing.T) {
	got := Directive("  Ship the release  ", []string{"/docs"}, []string{"researcher", "writer"})
	for _, s := range []string{
		`{"goal":`, `"steps":[{"id":"E1"`,
		"1 to 20 steps",
		"#E1.summary", "#E1.head=200", "#E1.last=200",
		"subagents: researcher, writer.",
		"routes: /docs.",
		"Task:\nShip the release\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("Directive lacks %q", s)
		}
	}
	none := Directive("x", nil, nil)
	for _, s := range []string{"Do not set subagent", "Do not set route"} {
		if !strings.Contains(none, s) {
			t.Errorf("Directive without targets lacks %q", s)
		}
	}
}

func TestFeedback(t *testing.T) {
	_, err := Parse(`{"steps":[{"id":"E1","task":""},{"id":"E1","task":"b"}]}`)
	got := Feedback(err)
	want := "Your plan could not be used.\n- step 1 (E1): task is empty; say what the step must do\n- step 2: id \"E1\" is used twice; ids must be unique\nAnswer again with the corrected plan as one JSON object and nothing else.\n"
	if got != want {
		t.Errorf("Feedback =\n%s\nwant\n%s", got, want)
	}
	if got := Feedback(errors.New("model said no")); !strings.Contains(got, "- model said no\n") {
		t.Errorf("Feedback(plain error) = %q", got)
	}
}
