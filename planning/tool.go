package planning

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

const toolDescription = `Replace the plan (the todo list for this task) with the list you pass.

The list is replaced as a whole: pass every item each time, including the ones that did not change. An item left out is dropped.

Each item has a content (a short line saying what to do) and a status: "pending" (not started), "in_progress" (being worked on now) or "completed" (done). Keep one item in_progress at a time, and mark an item completed as soon as it is done.

Example: {"todos":[{"content":"Understand the customer request","status":"completed"},{"content":"Check account context","status":"in_progress"},{"content":"Write the final response","status":"pending"}]}`

// Tool returns the writeTodos tool. Each call replaces the whole todo list:
// on valid input its output is {"todos":[...]} and it updates the todos state
// field; on invalid input it returns a *capabilities.InputError whose Msg is
// Validate's message and changes nothing.
// Its limits are the defaults, MaxTodos and MaxContentBytes.
func Tool() capabilities.Tool { return newTool(defaultLimits()) }

func newTool(lim limits) capabilities.Tool {
	return writeTodos{lim: lim, spec: capabilities.ToolSpec{
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
		s = mustJSON(enforcedInputSchema(maxItems))
	} else {
		s = mustJSON(inputSchema(maxItems))
	}
	schemas.Store(key, s)
	return s
}

type writeTodos struct {
	spec capabilities.ToolSpec
	lim  limits
}

func (t writeTodos) Spec() capabilities.ToolSpec { return t.spec }

func (t writeTodos) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	todos, _, err := validate(inv.Input, false, t.lim)
	if err != nil {
		return capabilities.Result{}, &capabilities.InputError{Tool: ToolName, Msg: err.Error()}
	}
	list := mustJSON(todos)
	return capabilities.Result{
		Output: append(append([]byte(`{"`+StateField+`":`), list...), '}'),
		Update: thread.State{StateField: list},
	}, nil
}

// todoSchema is the JSON Schema of one todo.
func todoSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content": map[string]any{
				"type":        "string",
				"minLength":   1,
				"description": "What to do, as one short line.",
			},
			"status": map[string]any{
				"type":        "string",
				"enum":        []string{string(Pending), string(InProgress), string(Completed)},
				"description": "pending: not started; in_progress: being worked on now; completed: done.",
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
	list["description"] = "The whole plan, in order. It replaces the current list."
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{StateField: list},
		"required":             []string{StateField},
		"additionalProperties": false,
	}
}

// mustJSON encodes v, which is always encodable here.
func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("planning: " + err.Error())
	}
	return raw
}
