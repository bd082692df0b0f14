package planning

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxTodos is the most items one writeTodos call may pass.
var MaxTodos = 200

// MaxContentBytes is the longest content, in bytes after trimming, of one
// item passed to writeTodos.
var MaxContentBytes = 2000

const objectHint = `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`

// Validate checks a writeTodos input, {"todos":[{"content":"…","status":"…"}]},
// and returns its todos with content trimmed. An error's message names the
// zero-based index and the field at fault, for example
// "todos[2].status must be one of pending, in_progress, completed", so the
// model can fix its call. Validate never returns a nil list without an error.
func Validate(raw json.RawMessage) ([]Todo, error) {
	var input any
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &input) != nil {
		return nil, errors.New(objectHint)
	}
	top := input.(map[string]any)
	if k := unknownKey(top, "todos"); k != "" {
		return nil, fmt.Errorf("input has unknown field %q; allowed fields are todos", k)
	}
	list, ok := top["todos"]
	if !ok {
		return nil, errors.New("todos is required")
	}
	items, ok := list.([]any)
	if !ok {
		return nil, errors.New("todos must be an array")
	}
	if len(items) > MaxTodos {
		return nil, fmt.Errorf("todos has %d items, over the limit of %d; merge or drop items", len(items), MaxTodos)
	}
	todos := make([]Todo, 0, len(items))
	for i, item := range items {
		t, err := validateItem(i, item)
		if err != nil {
			return nil, err
		}
		todos = append(todos, t)
	}
	return todos, nil
}

func validateItem(i int, item any) (Todo, error) {
	fields, ok := item.(map[string]any)
	if !ok {
		return Todo{}, fmt.Errorf("todos[%d] must be an object with content and status", i)
	}
	if k := unknownKey(fields, "content", "status"); k != "" {
		return Todo{}, fmt.Errorf("todos[%d] has unknown field %q; allowed fields are content, status", i, k)
	}
	content, _ := fields["content"].(string)
	content = strings.TrimSpace(content)
	if content == "" {
		return Todo{}, fmt.Errorf("todos[%d].content must be a non-empty string", i)
	}
	if len(content) > MaxContentBytes {
		return Todo{}, fmt.Errorf("todos[%d].content is %d bytes, over the limit of %d bytes; keep each item to a short line", i, len(content), MaxContentBytes)
	}
	status, _ := fields["status"].(string)
	if !Status(status).Valid() {
		return Todo{}, fmt.Errorf("todos[%d].status must be one of pending, in_progress, completed", i)
	}
	return Todo{Content: content, Status: Status(status)}, nil
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
