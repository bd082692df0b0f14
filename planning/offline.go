package planning

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/todo"
)

// maxOfflineFailures is how many failed writeTodos calls make the offline
// model stop planning and answer: the tool rejects what it writes, and
// trying forever would only run into the turn limit.
const maxOfflineFailures = 3

// offlineItem is one plan item as the offline model writes it.
type offlineItem struct {
	Content  string      `json:"content"`
	Status   todo.Status `json:"status"`
	Evidence string      `json:"evidence,omitempty"`
}

// offlineList is the offline model's writeTodos arguments.
type offlineList struct {
	Todos  []offlineItem `json:"todos"`
	Reason string        `json:"reason,omitempty"`
}

// OfflineStep scripts the built-in offline model on a route with a plan
// (capabilities.OfflineScripter): while writeTodos is offered and the plan
// is not finished, it advances the plan one step (the plan of the latest
// successful writeTodos call since the user last spoke, else the plan the
// system prompt renders, else a two-item default); on an enforced route
// (one offering verifyPostcondition) it then checks each open "Done when"
// postcondition. It works item by item: while an item is in progress it
// has the offline model make that item's app tool call, if one is left
// (one per item; the last open item takes all that are left), before it
// completes the item. After three failed writeTodos calls it stops
// planning.
func (marker) OfflineStep(t capabilities.OfflineTranscript) capabilities.OfflineStep {
	if !t.Offers(ToolName) {
		return capabilities.OfflineStep{}
	}
	enforced := t.Offers(VerifyTool)
	plan, failures := offlinePlan(t)
	if len(plan) == 0 {
		plan = []offlineItem{{Content: "Understand the request", Status: todo.Pending}, {Content: "Answer the request", Status: todo.Pending}}
	}
	if failures < maxOfflineFailures && itemWantsTool(t, plan) {
		return capabilities.OfflineStep{AppTool: true}
	}
	if next, ok := advancePlan(plan); ok && failures < maxOfflineFailures {
		list := offlineList{Todos: next}
		if enforced {
			list.Reason = "offline model: advanced one step"
		} else {
			for i := range list.Todos {
				list.Todos[i].Evidence = "" // Dawn's writeTodos takes only content and status
			}
		}
		return capabilities.OfflineStep{Tool: ToolName, Arguments: marshalOffline(list)}
	}
	if n, text, ok := openPostcondition(t.System); ok && enforced {
		args := marshalOffline(map[string]any{"index": n, "evidence": "offline model: checked " + strconv.Quote(shorten(text, 60))})
		return capabilities.OfflineStep{Tool: VerifyTool, Arguments: args}
	}
	input := strconv.Quote(shorten(t.User, 80))
	if failures >= maxOfflineFailures {
		return capabilities.OfflineStep{Summary: "stopped planning for " + input + " because " + ToolName + " failed " + strconv.Itoa(maxOfflineFailures) + " times."}
	}
	plural := "s"
	if len(plan) == 1 {
		plural = ""
	}
	return capabilities.OfflineStep{Summary: "worked through " + strconv.Itoa(len(plan)) + " plan item" + plural + " for " + input + "."}
}

// offlinePlan returns the arguments of the latest writeTodos call that
// succeeded since the user last spoke, or else the plan rendered in the
// system prompt (the thread's state when the run began), and how many
// writeTodos calls failed in all.
func offlinePlan(t capabilities.OfflineTranscript) (plan []offlineItem, failures int) {
	found := false
	for i := len(t.Calls) - 1; i >= 0; i-- {
		call := t.Calls[i]
		if call.Name != ToolName {
			continue
		}
		if !call.Answered || isErrorResult(call.Result) {
			failures++
			continue
		}
		if found || i < t.RunStart {
			continue
		}
		var list offlineList
		if json.Unmarshal([]byte(call.Arguments), &list) != nil {
			failures++
			continue
		}
		plan, found = list.Todos, true
	}
	if found {
		return plan, failures
	}
	for _, text := range t.System {
		plan = append(plan, parsePromptPlan(text)...)
	}
	return plan, failures
}

// itemWantsTool reports whether the plan item in progress gets an app tool
// call now: an app tool the model may call is left uncalled since the user
// last spoke, and the item has had none yet or no pending item follows it.
func itemWantsTool(t capabilities.OfflineTranscript, plan []offlineItem) bool {
	current := slices.IndexFunc(plan, func(it offlineItem) bool { return it.Status == todo.InProgress })
	if current < 0 {
		return false
	}
	since := t.RunStart // the calls made for the item in progress
	for i := len(t.Calls) - 1; i >= t.RunStart; i-- {
		if t.Calls[i].Name == ToolName {
			since = i + 1
			break
		}
	}
	called := func(from int, name string) bool {
		return slices.ContainsFunc(t.Calls[from:], func(c capabilities.OfflineCall) bool { return c.Name == name })
	}
	left, ownCalls := false, 0
	for _, name := range t.AppTools {
		if !called(t.RunStart, name) {
			left = true
		}
		if called(since, name) {
			ownCalls++
		}
	}
	last := !slices.ContainsFunc(plan, func(it offlineItem) bool { return it.Status == todo.Pending })
	return left && (ownCalls == 0 || last)
}

// openPostcondition finds the first unverified "Done when" postcondition in
// the system prompt, rendered as lines "0. [ ] text".
func openPostcondition(system []string) (int, string, bool) {
	for _, text := range system {
		for line := range strings.Lines(text) {
			num, rest, ok := strings.Cut(strings.TrimSpace(line), ". [ ] ")
			if !ok {
				continue
			}
			if n, err := strconv.Atoi(num); err == nil {
				return n, strings.TrimSpace(rest), true
			}
		}
	}
	return 0, "", false
}

func isErrorResult(result string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(result)), "error")
}

// parsePromptPlan reads the plan as the planning prompt renders it: lines of
// the form "- [pending] text", "- [in_progress] text" or "- [completed] text".
func parsePromptPlan(text string) []offlineItem {
	var plan []offlineItem
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "- [")
		if !ok {
			continue
		}
		status, content, ok := strings.Cut(rest, "] ")
		if !ok {
			continue
		}
		content, _, _ = strings.Cut(content, " (evidence: ") // an enforced plan shows evidence after the item
		content = strings.TrimSpace(content)
		if todo.Status(status).ValidOwned() && content != "" {
			plan = append(plan, offlineItem{Content: content, Status: todo.Status(status)})
		}
	}
	return plan
}

// advancePlan moves the plan one step: the item in progress is completed and
// the next pending one started, or else the first pending one is started. It
// reports false when nothing is left to do.
func advancePlan(plan []offlineItem) ([]offlineItem, bool) {
	next := make([]offlineItem, len(plan))
	copy(next, plan)
	firstPending := func(from int) int {
		for i := from; i < len(next); i++ {
			if next[i].Status == todo.Pending {
				return i
			}
		}
		return -1
	}
	for i, item := range next {
		if item.Status != todo.InProgress {
			continue
		}
		next[i].Status = todo.Completed
		next[i].Evidence = "offline model: finished " + strconv.Quote(shorten(item.Content, 60))
		j := firstPending(i + 1)
		if j < 0 {
			j = firstPending(0)
		}
		if j >= 0 {
			next[j].Status = todo.InProgress
		}
		return next, true
	}
	if j := firstPending(0); j >= 0 {
		next[j].Status = todo.InProgress
		return next, true
	}
	return nil, false
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

func marshalOffline(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(data)
}
