package models

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/todo"
	"github.com/tmc/langchaingo/llms"
)

// item is one plan item as writeTodos takes it.
type item struct {
	Content  string      `json:"content"`
	Status   todo.Status `json:"status"`
	Evidence string      `json:"evidence,omitempty"`
}

type todoList struct {
	Todos  []item `json:"todos"`
	Reason string `json:"reason,omitempty"`
}

// transcript is what the offline model reads from the messages of a call.
type transcript struct {
	system   []string
	lastUser string
	// reply is the answer a capability scripts for lastUser, its own
	// request to the model (see capabilities.OfflineScript).
	reply        string
	toolCalls    int // assistant tool calls so far
	calls        []llms.ToolCall
	runStart     int               // index in calls of the first call after the last user message
	results      map[string]string // tool output by call id
	taskCalled   bool
	taskSubagent string
	taskAnswer   string
}

// readTranscript reads messages, asking scripts about each text of a user
// turn.
func readTranscript(messages []llms.MessageContent, scripts offlineScripts) transcript {
	var t transcript
	var taskID string
	for _, mc := range messages {
		for _, part := range mc.Parts {
			switch p := part.(type) {
			case llms.TextContent:
				switch mc.Role {
				case llms.ChatMessageTypeSystem:
					t.system = append(t.system, p.Text)
				case llms.ChatMessageTypeHuman, llms.ChatMessageTypeGeneric:
					reply, own := scripts.reply(p.Text)
					if own && reply == "" {
						continue // a capability's own text, such as a harness note, is not the user
					}
					t.lastUser, t.reply = p.Text, reply
					t.runStart = len(t.calls)
				}
			case llms.ToolCall:
				if mc.Role != llms.ChatMessageTypeAI || p.FunctionCall == nil {
					continue
				}
				t.toolCalls++
				t.calls = append(t.calls, p)
				if p.FunctionCall.Name == offlineTaskTool {
					t.taskCalled, taskID = true, p.ID
					var args struct {
						Subagent string `json:"subagent"`
					}
					_ = json.Unmarshal([]byte(p.FunctionCall.Arguments), &args)
					t.taskSubagent = args.Subagent
				}
			case llms.ToolCallResponse:
				if t.results == nil {
					t.results = make(map[string]string)
				}
				t.results[p.ToolCallID] = p.Content
			}
		}
	}
	if taskID != "" {
		t.taskAnswer = t.results[taskID]
	}
	return t
}

// currentPlan returns the arguments of the latest writeTodos call that
// succeeded since the user last spoke, or else the plan rendered in the
// system prompt (the thread's state when the run began), and how many
// writeTodos calls failed in all.
func (t transcript) currentPlan() (plan []item, failures int) {
	found := false
	for i := len(t.calls) - 1; i >= 0; i-- {
		call := t.calls[i]
		if call.FunctionCall.Name != offlineTodosTool {
			continue
		}
		result, answered := t.results[call.ID]
		if !answered || isErrorResult(result) {
			failures++
			continue
		}
		if found || i < t.runStart {
			continue
		}
		var list todoList
		if json.Unmarshal([]byte(call.FunctionCall.Arguments), &list) != nil {
			failures++
			continue
		}
		plan, found = list.Todos, true
	}
	if found {
		return plan, failures
	}
	for _, text := range t.system {
		plan = append(plan, parsePromptPlan(text)...)
	}
	return plan, failures
}

// openPostcondition finds the first unverified "Done when" postcondition in
// the system prompt, rendered as lines "0. [ ] text".
func (t transcript) openPostcondition() (int, string, bool) {
	for _, text := range t.system {
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
func parsePromptPlan(text string) []item {
	var plan []item
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
			plan = append(plan, item{Content: content, Status: todo.Status(status)})
		}
	}
	return plan
}

// advancePlan moves the plan one step: the item in progress is completed and
// the next pending one started, or else the first pending one is started. It
// reports false when nothing is left to do.
func advancePlan(plan []item) ([]item, bool) {
	next := make([]item, len(plan))
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

// firstEnum returns the first enum value of property prop in a JSON schema
// given as a map, raw JSON or any value that marshals to one.
func firstEnum(schema any, prop string) (string, bool) {
	raw, ok := schemaJSON(schema)
	if !ok {
		return "", false
	}
	var parsed struct {
		Properties map[string]struct {
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &parsed) != nil {
		return "", false
	}
	enum := parsed.Properties[prop].Enum
	if len(enum) == 0 {
		return "", false
	}
	value, ok := enum[0].(string)
	return value, ok
}

func marshalArgs(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(data)
}
