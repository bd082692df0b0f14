package models

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/tmc/langchaingo/llms"
)

// appToolsKey marks a call's context with the names of the route's app
// tools.
type appToolsKey struct{}

// WithAppTools returns a context that tells the offline model which of the
// tools a call offers are the app's own (registered with dawn.Tool,
// dawn.RouteTool or from an MCP server) rather than a capability's. The
// offline model calls each of them once, on a route with a plan while
// working through its items (see NewOffline). The agent loop adds the route's app tools to every model
// call; without them the offline model calls no app tool.
func WithAppTools(ctx context.Context, names []string) context.Context {
	return context.WithValue(ctx, appToolsKey{}, names)
}

// appToolsFrom returns the app tool names of ctx.
func appToolsFrom(ctx context.Context) []string {
	names, _ := ctx.Value(appToolsKey{}).([]string)
	return names
}

// approvalKey marks a call's context with the names of the tools whose
// calls wait for a person's approval on the route.
type approvalKey struct{}

// WithApprovalTools returns a context that tells the offline model which
// tools a person must approve on the route (approve: in agent.md). The
// offline model never calls them and says so in its answer. The agent loop
// adds them to every model call.
func WithApprovalTools(ctx context.Context, names []string) context.Context {
	return context.WithValue(ctx, approvalKey{}, names)
}

// approvalToolsFrom returns the approval tool names of ctx.
func approvalToolsFrom(ctx context.Context) []string {
	names, _ := ctx.Value(approvalKey{}).([]string)
	return names
}

// offeredAppTools splits the app tools the call offers, in name order, into
// those the offline model may call and those a person must approve.
func offeredAppTools(offered []llms.Tool, appTools, approve []string) (callable, skipped []string) {
	for _, tool := range offered {
		switch name := toolName(tool); {
		case name == "" || !slices.Contains(appTools, name):
		case slices.Contains(approve, name):
			skipped = append(skipped, name)
		default:
			callable = append(callable, name)
		}
	}
	slices.Sort(callable)
	slices.Sort(skipped)
	return callable, skipped
}

func toolName(tool llms.Tool) string {
	if tool.Function == nil {
		return ""
	}
	return tool.Function.Name
}

// nextAppTool returns the call of the first of callable that the model has
// not called since the user last spoke; nil when every one has been called.
func (t transcript) nextAppTool(nextID string, offered []llms.Tool, callable []string) *llms.ContentResponse {
	for _, name := range callable {
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
	Const      *any              `json:"const"`
	Default    *any              `json:"default"`
	Examples   []any             `json:"examples"`
	Format     string            `json:"format"`
	MinLength  *int              `json:"minLength"`
	MaxLength  *int              `json:"maxLength"`
	Minimum    *float64          `json:"minimum"`
	Maximum    *float64          `json:"maximum"`
	ExclMin    *float64          `json:"exclusiveMinimum"`
	MinItems   int               `json:"minItems"`
	Items      *schema           `json:"items"`
}

// argsFromSchema builds the arguments of an app tool from its input
// schema: each required property gets the value the schema gives (its
// const, default, first example or first enum value), else one of its
// type that the schema accepts: for a string one of its format (an email,
// a URI, a date, a time, a UUID) or the user's text fitted to its length
// limits; for a number or integer 0 moved into its bounds; false for a
// boolean; minItems items for an array; and, for an object, its own
// required properties. Optional properties are left out.
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
	switch {
	case s.Const != nil:
		return *s.Const
	case s.Default != nil:
		return *s.Default
	case len(s.Examples) > 0:
		return s.Examples[0]
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch t := s.typeName(); t {
	case "string":
		return s.text(user)
	case "number", "integer":
		return s.number(t == "integer")
	case "boolean":
		return false
	case "array":
		items := make([]any, 0, s.MinItems)
		for range min(s.MinItems, maxOfflineItems) {
			items = append(items, s.itemSchema().value(user))
		}
		return items
	case "object":
		return s.object(user)
	}
	return nil
}

// maxOfflineItems bounds the items the offline model puts in one array.
const maxOfflineItems = 16

func (s schema) itemSchema() schema {
	if s.Items == nil {
		return schema{}
	}
	return *s.Items
}

// formatValues are the offline model's strings of the formats it knows.
var formatValues = map[string]string{
	"email":     "user@example.com",
	"uri":       "https://example.com/",
	"url":       "https://example.com/",
	"date":      "2025-01-01",
	"date-time": "2025-01-01T00:00:00Z",
	"time":      "00:00:00Z",
	"uuid":      "00000000-0000-4000-8000-000000000000",
}

// text is a string the schema accepts: one of its format, else the
// user's text cut to maxLength or repeated up to minLength.
func (s schema) text(user string) string {
	if v, ok := formatValues[s.Format]; ok {
		return v
	}
	r := []rune(user)
	if s.MinLength != nil && len(r) > 0 {
		for len(r) < *s.MinLength {
			r = append(append(r, ' '), []rune(user)...)
		}
	}
	if s.MaxLength != nil && len(r) > *s.MaxLength {
		r = r[:max(*s.MaxLength, 0)]
	}
	return string(r)
}

// number is 0 moved into the schema's bounds.
func (s schema) number(integer bool) any {
	v := 0.0
	if s.Minimum != nil && v < *s.Minimum {
		v = *s.Minimum
	}
	if s.ExclMin != nil && v <= *s.ExclMin {
		v = *s.ExclMin + 1
		if !integer {
			v = *s.ExclMin + 0.5
		}
	}
	if s.Maximum != nil && v > *s.Maximum {
		v = *s.Maximum
	}
	if integer {
		return int64(math.Ceil(v))
	}
	return v
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
