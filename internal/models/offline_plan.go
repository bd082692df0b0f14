package models

import (
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/tmc/langchaingo/llms"
)

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

// forScripters is the transcript as a capability's offline script reads
// it, with the names of the tools offered and of the app tools the model
// may call.
func (t transcript) forScripters(offered []llms.Tool, callable []string) capabilities.OfflineTranscript {
	out := capabilities.OfflineTranscript{System: t.system, User: t.lastUser, RunStart: t.runStart, AppTools: callable}
	for _, tool := range offered {
		if tool.Function != nil {
			out.Tools = append(out.Tools, tool.Function.Name)
		}
	}
	for _, call := range t.calls {
		result, answered := t.results[call.ID]
		out.Calls = append(out.Calls, capabilities.OfflineCall{
			ID: call.ID, Name: call.FunctionCall.Name, Arguments: call.FunctionCall.Arguments,
			Result: result, Answered: answered,
		})
	}
	return out
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
