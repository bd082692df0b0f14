package planfirst

import (
	"encoding/json"
	"strings"
)

// OfflineReply tells the built-in offline model about a text in a user
// turn (capabilities.OfflineScript): a Directive gets the offline plan as
// its reply, and a report (Report.Text) is plan-first's own text, not the
// user's request.
func (marker) OfflineReply(text string) (reply string, own bool) {
	if task, subagents, ok := ReadDirective(text); ok {
		return offlinePlan(task, subagents), true
	}
	return "", strings.HasPrefix(text, ReportPrefix)
}

// offlinePlan is the offline model's plan for task: three steps that pass
// results along with placeholders, the middle one handed to the first
// subagent when there is one.
func offlinePlan(task string, subagents []string) string {
	short := shorten(task, 80)
	work := map[string]any{"id": "E2", "task": "Work on the task using what step E1 found: #E1.summary", "deps": []string{"E1"}}
	if len(subagents) > 0 && subagents[0] != "" {
		work["subagent"] = subagents[0]
	}
	data, _ := json.Marshal(map[string]any{
		"goal": "Answer: " + short,
		"steps": []any{
			map[string]any{"id": "E1", "task": "Work out what is being asked: " + short},
			work,
			map[string]any{"id": "E3", "task": "Check the result of step E2: #E2.head=200", "deps": []string{"E2"}},
		},
	})
	return string(data)
}

// shorten collapses white space and cuts s to at most n runes, marking a cut
// with an ellipsis.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
