package planning

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxTodos is the most items one writeTodos call may pass, unless dawn.yaml
// sets limits.todos.
const MaxTodos = 200

// MaxContentBytes is the longest content, in bytes after trimming, of one
// item passed to writeTodos, unless dawn.yaml sets limits.todo_bytes.
const MaxContentBytes = 2000

const objectHint = `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`

// Validate checks a writeTodos input, {"todos":[{"content":"…","status":"…"}]},
// and returns its todos with content trimmed. An error's message names the
// zero-based index and the field at fault, for example
// "todos[2].status must be one of pending, in_progress, completed", so the
// model can fix its call. Validate never returns a nil list without an error.
func Validate(raw json.RawMessage) ([]Todo, error) {
	todos, _, err := validate(raw, false, defaultLimits())
	return todos, err
}

// limits bound one writeTodos input.
type limits struct{ todos, itemBytes int }

func defaultLimits() limits { return limits{todos: MaxTodos, itemBytes: MaxContentBytes} }

// ValidateEnforced is Validate for a route whose plan the harness owns:
// items may also be failed or skipped and carry "evidence", and the input
// may give a "reason" for the change, which is returned.
func ValidateEnforced(raw json.RawMessage) ([]Todo, string, error) {
	return validate(raw, true, defaultLimits())
}

func validate(raw json.RawMessage, enforced bool, lim limits) ([]Todo, string, error) {
	var input any
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &input) != nil {
		return nil, "", errors.New(objectHint)
	}
	top := input.(map[string]any)
	allowedTop := []string{"todos"}
	if enforced {
		allowedTop = append(allowedTop, "reason")
	}
	if k := unknownKey(top, allowedTop...); k != "" {
		return nil, "", fmt.Errorf("input has unknown field %q; allowed fields are %s", k, strings.Join(allowedTop, ", "))
	}
	reason, isString := top["reason"].(string)
	if _, given := top["reason"]; given && !isString {
		return nil, "", errors.New("reason must be a string")
	}
	list, ok := top["todos"]
	if !ok {
		return nil, "", errors.New("todos is required")
	}
	items, ok := list.([]any)
	if !ok {
		return nil, "", errors.New("todos must be an array")
	}
	if len(items) > lim.todos {
		return nil, "", fmt.Errorf("todos has %d items, over the limit of %d; merge or drop items", len(items), lim.todos)
	}
	todos := make([]Todo, 0, len(items))
	for i, item := range items {
		t, err := validateItem(i, item, enforced, lim)
		if err != nil {
			return nil, "", err
		}
		todos = append(todos, t)
	}
	return todos, strings.TrimSpace(reason), nil
}

func validateItem(i int, item any, enforced bool, lim limits) (Todo, error) {
	fields, ok := item.(map[string]any)
	if !ok {
		return Todo{}, fmt.Errorf("todos[%d] must be an object with content and status", i)
	}
	allowed := []string{"content", "status"}
	if enforced {
		allowed = append(allowed, "evidence")
	}
	if k := unknownKey(fields, allowed...); k != "" {
		return Todo{}, fmt.Errorf("todos[%d] has unknown field %q; allowed fields are %s", i, k, strings.Join(allowed, ", "))
	}
	content, _ := fields["content"].(string)
	content = strings.TrimSpace(content)
	if content == "" {
		return Todo{}, fmt.Errorf("todos[%d].content must be a non-empty string", i)
	}
	if len(content) > lim.itemBytes {
		return Todo{}, fmt.Errorf("todos[%d].content is %d bytes, over the limit of %d bytes; keep each item to a short line", i, len(content), lim.itemBytes)
	}
	status, _ := fields["status"].(string)
	switch {
	case enforced && !Status(status).ValidOwned():
		return Todo{}, fmt.Errorf("todos[%d].status must be one of pending, in_progress, completed, failed, skipped", i)
	case !enforced && !Status(status).Valid():
		return Todo{}, fmt.Errorf("todos[%d].status must be one of pending, in_progress, completed", i)
	}
	evidence, isString := fields["evidence"].(string)
	if _, given := fields["evidence"]; given && !isString {
		return Todo{}, fmt.Errorf("todos[%d].evidence must be a string", i)
	}
	if len(evidence) > lim.itemBytes {
		return Todo{}, fmt.Errorf("todos[%d].evidence is %d bytes, over the limit of %d bytes; keep evidence to a short, checkable record", i, len(evidence), lim.itemBytes)
	}
	return Todo{Content: content, Status: Status(status), Evidence: strings.TrimSpace(evidence)}, nil
}

// jsonKind is the first byte of a JSON value: '{', '[', '"', a digit or '-',
// 't', 'f' or 'n'; zero when raw is blank.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// unknownKey returns the first key of m, in sorted order, that is not one of
// allowed; empty when there is none.
func unknownKey(m map[string]any, allowed ...string) string {
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	slices.Sort(unknown)
	return unknown[0]
}
