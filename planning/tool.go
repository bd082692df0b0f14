package planning

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/thread"
)

// toolDescription says what the tool does; how to keep the plan is said
// once, in the prompt section (see promptIntro). The schema has no
// descriptions for the same reason: it goes with every model request.
const toolDescription = `Replace the plan (the todo list) with the list you pass, in order.`

// Tool returns the writeTodos tool. Each call replaces the whole todo list:
// on valid input its output is {"todos":[...]} and it updates the todos state
// field; on invalid input it returns a *capabilities.InputError whose Msg is
// Validate's message and changes nothing.
// Its limits are the defaults, MaxTodos and MaxContentBytes. It keeps no
// revisions: the planning marker's writeTodos does, in RevisionsField.
func Tool() capabilities.Tool { return newTool(defaultLimits(), false) }

// newTool is writeTodos with limits lim; with revise, each call also
// records its change in RevisionsField.
func newTool(lim limits, revise bool) capabilities.Tool {
	return writeTodos{lim: lim, revise: revise, spec: capabilities.ToolSpec{
		Name:        ToolName,
		Description: toolDescription,
		Schema:      schemaFor(lim.todos, false),
	}}
}

// schemas caches writeTodos input schemas by item limit and mode: every
// route of an app shares one, and encoding it per route showed up in the
// profile of loading a 1,000-route app.
var schemas sync.Map // schemaKey -> json.RawMessage

type schemaKey struct {
	maxItems int
	enforced bool
}

func schemaFor(maxItems int, enforced bool) json.RawMessage {
	key := schemaKey{maxItems, enforced}
	if s, ok := schemas.Load(key); ok {
		return s.(json.RawMessage)
	}
	var s json.RawMessage
	if enforced {
		s = mustJSON(withoutDescriptions(enforcedInputSchema(maxItems)))
	} else {
		s = mustJSON(inputSchema(maxItems))
	}
	schemas.Store(key, s)
	return s
}

type writeTodos struct {
	spec   capabilities.ToolSpec
	lim    limits
	revise bool
}

func (t writeTodos) Spec() capabilities.ToolSpec { return t.spec }

func (t writeTodos) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	todos, _, err := validate(inv.Input, false, t.lim)
	if err != nil {
		return capabilities.Result{}, &capabilities.InputError{Tool: ToolName, Msg: err.Error()}
	}
	list := mustJSON(todos)
	update := thread.State{StateField: list}
	if t.revise {
		update[RevisionsField] = revisedUpdate(inv.State, todos, plandiff.SourceModel, "")
	}
	return capabilities.Result{
		Output: append(append([]byte(`{"`+StateField+`":`), list...), '}'),
		Update: update,
	}, nil
}

// todoSchema is the JSON Schema of one todo.
func todoSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content": map[string]any{
				"type":      "string",
				"minLength": 1,
			},
			"status": map[string]any{
				"type": "string",
				"enum": []string{string(Pending), string(InProgress), string(Completed)},
			},
		},
		"required":             []string{"content", "status"},
		"additionalProperties": false,
	}
}

// listSchema is the JSON Schema of the todos state field.
func listSchema() map[string]any {
	return map[string]any{
		"type":  "array",
		"items": todoSchema(),
	}
}

// inputSchema is the JSON Schema of writeTodos's input.
func inputSchema(maxItems int) map[string]any {
	list := listSchema()
	list["maxItems"] = maxItems
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{StateField: list},
		"required":             []string{StateField},
		"additionalProperties": false,
	}
}

// withoutDescriptions returns schema without its "description" texts, at
// every level: the schema goes with every model request and the prompt
// section says what the fields mean. The schemas typegen documents state
// types from keep theirs.
func withoutDescriptions(schema map[string]any) map[string]any {
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		if _, text := v.(string); k == "description" && text {
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			v = withoutDescriptions(sub)
		}
		out[k] = v
	}
	return out
}

// mustJSON encodes v, which is always encodable here.
func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("planning: " + err.Error())
	}
	return raw
}
