package planfirst

import (
	"encoding/json"
)

// MaxSteps is the most steps a plan may have. A planner that needs more is
// splitting the work too finely; validation asks it to merge steps.
const MaxSteps = 20

// MaxIDLen is the longest step id, in bytes.
const MaxIDLen = 32

// Step is one unit of work in a plan.
//
// Task is the instruction the step's runner receives, after its placeholders
// are resolved. Route or Subagent (at most one) names where the step is
// dispatched; with neither, the caller runs it on the current route's agent.
// Deps lists earlier steps this step waits for; after validation it also
// holds every step the task references through a placeholder.
type Step struct {
	ID       string   `json:"id"`
	Task     string   `json:"task"`
	Route    string   `json:"route,omitempty"`
	Subagent string   `json:"subagent,omitempty"`
	Deps     []string `json:"deps,omitempty"`
}

// Plan is the structured plan a planner model returns: an optional one-line
// goal and the steps, in the order the planner wrote them.
type Plan struct {
	Goal  string `json:"goal,omitempty"`
	Steps []Step `json:"steps"`
}

// JSON returns the plan as indented JSON, the form shown back to the model
// (as the assistant turn before the report) and stored with a run.
func (p *Plan) JSON() string {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil { // a Plan holds only strings; this cannot happen
		return "{}"
	}
	return string(b)
}

// Step returns the step with the given id and whether there is one.
func (p *Plan) Step(id string) (Step, bool) {
	for _, s := range p.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return Step{}, false
}

// ValidID reports whether id is a well-formed step id: an ASCII letter, then
// letters, digits, '_' or '-', ending in a letter or digit, at most MaxIDLen
// bytes. The last character may not be '_' or '-' so that "#E1-" in a
// sentence reads as the placeholder #E1 followed by a dash.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen || !isLetter(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if !isIDChar(id[i]) {
			return false
		}
	}
	last := id[len(id)-1]
	return last != '_' && last != '-'
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isIDChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' }

// isWordChar reports whether c continues a word, so that a '#' after it (as
// in "C#" or "issue#4") does not start a placeholder.
func isWordChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }
