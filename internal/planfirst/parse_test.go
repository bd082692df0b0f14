package planfirst

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	twoSteps := &Plan{Goal: "ship it", Steps: []Step{
		{ID: "E1", Task: "Find the bug"},
		{ID: "E2", Task: "Fix it using #E1.summary", Deps: []string{"E1"}},
	}}
	obj := `{"goal":"ship it","steps":[{"id":"E1","task":"Find the bug"},{"id":"E2","task":"Fix it using #E1.summary"}]}`
	tests := []struct {
		name string
		in   string
		want *Plan
	}{
		{"bare object", obj, twoSteps},
		{"json fence", "```json\n" + obj + "\n```", twoSteps},
		{"plain fence with prose", "Here is the plan:\n```\n" + obj + "\n```\nLet me know!", twoSteps},
		{"prose around", "Sure. " + obj + " That is all.", twoSteps},
		{"prose with brackets first", "Notes [1] and {see below} and []:\n" + obj, twoSteps},
		{"quote in prose before", `He said "hi. ` + obj, twoSteps},
		{"braces inside strings", `{"steps":[{"id":"E1","task":"print {\"a\": [1]} and }]"}]}`,
			&Plan{Steps: []Step{{ID: "E1", Task: `print {"a": [1]} and }]`}}}},
		{"bare array", `[{"id":"E1","task":"a"},{"id":"E2","task":"b","deps":["E1"],"subagent":"w"}]`,
			&Plan{Steps: []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b", Deps: []string{"E1"}, Subagent: "w"}}}},
		{"unknown keys ignored", `{"steps":[{"id":"E1","task":"a","why":"x"}],"notes":1}`,
			&Plan{Steps: []Step{{ID: "E1", Task: "a"}}}},
		{"key case", `{"Steps":[{"ID":"E1","Task":"a"}]}`, &Plan{Steps: []Step{{ID: "E1", Task: "a"}}}},
		{"trims and dedups", `{"steps":[{"id":" E1 ","task":" a "},{"id":"E2","task":"b","deps":["E1"," E1"]}]}`,
			&Plan{Steps: []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b", Deps: []string{"E1"}}}}},
		{"outer invalid, inner steps array", `{"steps":[{"id":"E1","task":"a"}],}`,
			&Plan{Steps: []Step{{ID: "E1", Task: "a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // every one must appear in the error
	}{
		{"empty", "", []string{"no JSON plan found"}},
		{"prose only", "I think we should first look at the code.", []string{"no JSON plan found"}},
		{"not plan shaped", `{"answer":"42"} and [1,2]`, []string{"no JSON plan found"}},
		{"empty steps", `{"steps":[]}`, []string{"no steps"}},
		{"null steps", `{"steps":null}`, []string{"no steps"}},
		{"deps is a string", `{"steps":[{"id":"E1","task":"a","deps":"E0"}]}`, []string{"steps.deps is a JSON string; it must be a list of step ids"}},
		{"id is a number", `[{"id":1,"task":"a"}]`, []string{"steps.id is a JSON number; it must be a string"}},
		{"steps is an object", `{"steps":{"id":"E1"}}`, []string{"steps is a JSON object; it must be a list of step objects"}},
		{"too large", strings.Repeat(" ", MaxInputBytes+1), []string{"larger than 256 KiB"}},
		{"validation runs", "```json\n" + `{"steps":[{"id":"E1","task":""}]}` + "\n```", []string{"step 1 (E1): task is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", p)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseUnclosedBracketsStayFast(t *testing.T) {
	// Many unclosed brackets must not make Parse quadratic: the scan
	// budget ends the search with an error.
	in := strings.Repeat("{[", MaxInputBytes/2-64)
	if _, err := Parse(in); err == nil {
		t.Fatal("Parse accepted unbalanced brackets")
	}
}
