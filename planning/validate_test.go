package planning

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestValidateErrors(t *testing.T) {
	long := strings.Repeat("a", MaxContentBytes+1)
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"content":"x","status":"pending"},`, MaxTodos+1), ",") + "]"
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"empty input", ``, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"not JSON", `todos: []`, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"truncated JSON", `{"todos":[`, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"null", `null`, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"array", `[{"content":"a","status":"pending"}]`, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"string", `"todos"`, `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
		{"missing todos", `{}`, `todos is required`},
		{"unknown top-level field", `{"todos":[],"foo":1}`, `input has unknown field "foo"; allowed fields are todos`},
		{"misspelled todos", `{"todo":[]}`, `input has unknown field "todo"; allowed fields are todos`},
		{"todos null", `{"todos":null}`, `todos must be an array`},
		{"todos object", `{"todos":{"content":"a","status":"pending"}}`, `todos must be an array`},
		{"todos string", `{"todos":"- [ ] a"}`, `todos must be an array`},
		{"element string", `{"todos":["a"]}`, `todos[0] must be an object with content and status`},
		{"element null", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},null]}`, `todos[2] must be an object with content and status`},
		{"element array", `{"todos":[[]]}`, `todos[0] must be an object with content and status`},
		{"content missing", `{"todos":[{"status":"pending"}]}`, `todos[0].content must be a non-empty string`},
		{"content empty", `{"todos":[{"content":"","status":"pending"}]}`, `todos[0].content must be a non-empty string`},
		{"content blank", `{"todos":[{"content":"a","status":"pending"},{"content":" \n\t ","status":"pending"}]}`, `todos[1].content must be a non-empty string`},
		{"content number", `{"todos":[{"content":7,"status":"pending"}]}`, `todos[0].content must be a non-empty string`},
		{"content null", `{"todos":[{"content":null,"status":"pending"}]}`, `todos[0].content must be a non-empty string`},
		{"status missing", `{"todos":[{"content":"a"}]}`, `todos[0].status must be one of pending, in_progress, completed`},
		{"status unknown", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"content":"c","status":"done"}]}`, `todos[2].status must be one of pending, in_progress, completed`},
		{"status wrong case", `{"todos":[{"content":"a","status":"Pending"}]}`, `todos[0].status must be one of pending, in_progress, completed`},
		{"status number", `{"todos":[{"content":"a","status":1}]}`, `todos[0].status must be one of pending, in_progress, completed`},
		{"status null", `{"todos":[{"content":"a","status":null}]}`, `todos[0].status must be one of pending, in_progress, completed`},
		{"unknown item field", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"content":"c","status":"pending","foo":true}]}`, `todos[2] has unknown field "foo"; allowed fields are content, status`},
		{"unknown fields sorted", `{"todos":[{"zeta":1,"content":"a","status":"pending","alpha":2}]}`, `todos[0] has unknown field "alpha"; allowed fields are content, status`},
		{"misspelled content", `{"todos":[{"contnet":"a","status":"pending"}]}`, `todos[0] has unknown field "contnet"; allowed fields are content, status`},
		{"content too long", `{"todos":[{"content":"` + long + `","status":"pending"}]}`, fmt.Sprintf("todos[0].content is %d bytes, over the limit of %d bytes; keep each item to a short line", MaxContentBytes+1, MaxContentBytes)},
		{"too many todos", `{"todos":` + many + `}`, fmt.Sprintf("todos has %d items, over the limit of %d; merge or drop items", MaxTodos+1, MaxTodos)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Validate(json.RawMessage(tt.input))
			if err == nil {
				t.Fatalf("Validate(%s) = %v, want error %q", tt.input, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
			if got != nil {
				t.Errorf("todos = %v on error, want nil", got)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	atLimit := strings.Repeat("é", MaxContentBytes/2)
	tests := []struct {
		name  string
		input string
		want  []Todo
	}{
		{"empty list clears the plan", `{"todos":[]}`, []Todo{}},
		{
			"every status",
			`{"todos":[{"content":"Understand the customer request","status":"completed"},{"content":"Check account context","status":"in_progress"},{"content":"Write the final response","status":"pending"}]}`,
			[]Todo{{"Understand the customer request", Completed, ""}, {"Check account context", InProgress, ""}, {"Write the final response", Pending, ""}},
		},
		{"content trimmed", `{"todos":[{"content":"  padded \n","status":"pending"}]}`, []Todo{{"padded", Pending, ""}}},
		{"key order free", `{"todos":[{"status":"pending","content":"a"}]}`, []Todo{{"a", Pending, ""}}},
		{"whitespace around", " \n {\"todos\" : [ ] } \n", []Todo{}},
		{"content at byte limit", `{"todos":[{"content":"` + atLimit + `","status":"pending"}]}`, []Todo{{atLimit, Pending, ""}}},
		{"escaped content", `{"todos":[{"content":"say \"hi\" \u2014 now","status":"pending"}]}`, []Todo{{`say "hi" — now`, Pending, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Validate(json.RawMessage(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestValidateMaxTodosExact(t *testing.T) {
	items := make([]Todo, MaxTodos)
	for i := range items {
		items[i] = Todo{Content: fmt.Sprint("step ", i), Status: Pending}
	}
	raw, _ := json.Marshal(map[string]any{"todos": items})
	got, err := Validate(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxTodos {
		t.Errorf("got %d todos, want %d", len(got), MaxTodos)
	}
}
