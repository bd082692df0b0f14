package models

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/tmc/langchaingo/llms"
)

// appToolsKey marks a call's context with the names of the route's app
// tools.
type appToolsKey struct{}

// WithAppTools returns a context that tells the offline model which of the
// tools a call offers are the app's own (registered with dawn.Tool,
// dawn.RouteTool or from an MCP server) rather than a capability's. Once
// the plan is done, the offline model calls each of them once (see
// NewOffline). The agent loop adds the route's app tools to every model
// call; without them the offline model calls no app tool.
func WithAppTools(ctx context.Context, names []string) context.Context {
	return context.WithValue(ctx, appToolsKey{}, names)
}

// appToolsFrom returns the app tool names of ctx.
func appToolsFrom(ctx context.Context) []string {
	names, _ := ctx.Value(appToolsKey{}).([]string)
	return names
}

// nextAppTool returns the call of the first app tool, in name order, that
// the call offers and the model has not called since the user last spoke;
// nil when every one has been called.
func (t transcript) nextAppTool(nextID string, offered []llms.Tool, appTools []string) *llms.ContentResponse {
	var names []string
	for _, tool := range offered {
		if tool.Function != nil && slices.Contains(appTools, tool.Function.Name) {
			names = append(names, tool.Function.Name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if t.calledSinceUser(name) {
			continue
		}
		args := argsFromSchema(findTool(offered, name).Parameters, t.lastUser)
		return toolCallResponse(nextID, name, marshalArgs(args))
	}
	return nil
}

// calledSinceUser reports whether the model called tool name since the
// user last spoke.
func (t transcript) calledSinceUser(name string) bool {
	for _, call := range t.calls[t.runStart:] {
		if call.FunctionCall.Name == name {
			return true
		}
	}
	return false
}

// appToolResults are the app tools called since the user last spoke, in
// call order, with their results.
func (t transcript) appToolResults(appTools []string) []toolResult {
	var out []toolResult
	for _, call := range t.calls[t.runStart:] {
		if slices.Contains(appTools, call.FunctionCall.Name) {
			out = append(out, toolResult{name: call.FunctionCall.Name, output: t.results[call.ID]})
		}
	}
	return out
}

// toolResult is one app tool's answer, for the offline model's text.
type toolResult struct{ name, output string }

// schema is the part of a JSON Schema argsFromSchema reads.
type schema struct {
	Type       json.RawMessage   `json:"type"`
	Properties map[string]schema `json:"properties"`
	Required   []string          `json:"required"`
	Enum       []any             `json:"enum"`
}

// argsFromSchema builds the arguments of an app tool from its input
// schema: each required property gets its first enum value, else by type
// the user's text for a string, 0 for a number or integer, false for a
// boolean, an empty list for an array and, for an object, its own required
// properties; optional properties are left out.
func argsFromSchema(params any, user string) map[string]any {
	var s schema
	if raw, ok := schemaJSON(params); ok {
		_ = json.Unmarshal(raw, &s) // an unreadable schema gets no arguments
	}
	return s.object(user)
}

func (s schema) object(user string) map[string]any {
	args := map[string]any{}
	for _, name := range s.Required {
		args[name] = s.Properties[name].value(user)
	}
	return args
}

func (s schema) value(user string) any {
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch s.typeName() {
	case "string":
		return user
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return s.object(user)
	}
	return nil
}

// typeName is the schema's type; of a list of types such as
// ["string","null"], the first that is not "null".
func (s schema) typeName() string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	for _, t := range many {
		if t != "null" {
			return t
		}
	}
	return ""
}

// schemaJSON returns a JSON schema given as raw JSON, a string, or any
// value that marshals to one.
func schemaJSON(schema any) ([]byte, bool) {
	switch s := schema.(type) {
	case nil:
		return nil, false
	case json.RawMessage:
		return s, true
	case []byte:
		return s, true
	case string:
		return []byte(s), true
	}
	raw, err := json.Marshal(schema)
	return raw, err == nil
}

// quoteResults renders the app tools' results for the answer:
// ` countWords answered "{\"words\":7}".`
func quoteResults(results []toolResult) string {
	var s string
	for _, r := range results {
		s += " " + r.name + " answered " + strconv.Quote(shorten(r.output, 80)) + "."
	}
	return s
}
