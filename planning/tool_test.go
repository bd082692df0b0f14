package planning

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/jsonschema-go/jsonschema"
)

func TestToolSpec(t *testing.T) {
	spec := Tool().Spec()
	if spec.Name != ToolName {
		t.Errorf("name = %q, want %q", spec.Name, ToolName)
	}
	// The description says what the tool does; how to keep the plan is in
	// the prompt section (TestPlanningOverheadPerRequest).
	for _, want := range []string{"Replace", "list"} {
		if !strings.Contains(spec.Description, want) {
			t.Errorf("description does not mention %q", want)
		}
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(spec.Schema, &schema); err != nil {
		t.Fatalf("schema is not a JSON Schema: %v\n%s", err, spec.Schema)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("schema does not resolve: %v", err)
	}
	// The schema and Validate agree on these inputs.
	tests := []struct {
		input string
		valid bool
	}{
		{`{"todos":[]}`, true},
		{`{"todos":[{"content":"a","status":"in_progress"}]}`, true},
		{`{}`, false},
		{`{"todos":[{"content":"","status":"pending"}]}`, false},
		{`{"todos":[{"content":"a","status":"done"}]}`, false},
		{`{"todos":[{"content":"a","status":"pending","x":1}]}`, false},
		{`{"todos":[],"x":1}`, false},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.input), &v); err != nil {
			t.Fatal(err)
		}
		schemaErr := resolved.Validate(v)
		_, validateErr := Validate(json.RawMessage(tt.input))
		if (schemaErr == nil) != tt.valid || (validateErr == nil) != tt.valid {
			t.Errorf("%s: schema error %v, Validate error %v; want valid=%v", tt.input, schemaErr, validateErr, tt.valid)
		}
	}
}

func TestToolCall(t *testing.T) {
	before := thread.State{StateField: json.RawMessage(`[{"content":"old","status":"pending"}]`)}
	tests := []struct {
		name       string
		input      string
		wantOutput string
		wantErr    string
	}{
		{
			name:       "replaces the list",
			input:      `{"todos":[{"content":" Check account context ","status":"in_progress"},{"content":"Write the final response","status":"pending"}]}`,
			wantOutput: `{"todos":[{"content":"Check account context","status":"in_progress"},{"content":"Write the final response","status":"pending"}]}`,
		},
		{name: "empty list", input: `{"todos":[]}`, wantOutput: `{"todos":[]}`},
		{name: "bad status", input: `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"content":"c","status":"doing"}]}`, wantErr: "todos[2].status must be one of pending, in_progress, completed"},
		{name: "not an object", input: `[]`, wantErr: `input must be a JSON object like {"todos":[{"content":"…","status":"pending"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Tool().Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(tt.input), State: before})
			if tt.wantErr != "" {
				checkRefused(t, res, err, tt.wantErr)
				return
			}
			checkReplaced(t, res, err, tt.wantOutput)
		})
	}
	if string(before[StateField]) != `[{"content":"old","status":"pending"}]` {
		t.Error("Call modified the invocation's state")
	}
}

// checkRefused checks a writeTodos call that must fail: an input error
// the model sees, saying want, and no output or update.
func checkRefused(t *testing.T, res capabilities.Result, err error, want string) {
	t.Helper()
	var inputErr *capabilities.InputError
	if !errors.As(err, &inputErr) {
		t.Fatalf("error = %v, want *capabilities.InputError", err)
	}
	if inputErr.Tool != ToolName || inputErr.Msg != want {
		t.Errorf("InputError = {%q, %q}, want {%q, %q}", inputErr.Tool, inputErr.Msg, ToolName, want)
	}
	if res.Update != nil || res.Output != nil {
		t.Errorf("result on error = %+v, want none (state untouched)", res)
	}
}

// checkReplaced checks a writeTodos call that must succeed: its output is
// want and its update sets todos to the output's list.
func checkReplaced(t *testing.T, res capabilities.Result, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != want {
		t.Errorf("output\n got %s\nwant %s", res.Output, want)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if len(res.Update) != 1 || string(res.Update[StateField]) != string(out[StateField]) {
		t.Errorf("update = %v, want {todos: %s}", res.Update, out[StateField])
	}
}

// TestToolCallThroughPrepared runs writeTodos on a prepared route and applies
// its update, as the runtime does: a bad call leaves the state as it was.
func TestToolCallThroughPrepared(t *testing.T) {
	p := prepare(t, "- [ ] seed item\n")
	state := p.InitialState()
	tool := p.Tool(ToolName)
	if tool == nil {
		t.Fatal("prepared route has no writeTodos tool")
	}
	calls := []struct {
		input string
		want  string
	}{
		{`{"todos":[{"content":"a","status":"in_progress"}]}`, `[{"content":"a","status":"in_progress"}]`},
		{`{"todos":[{"content":"a","status":"finished"}]}`, `[{"content":"a","status":"in_progress"}]`},
		{`{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]}`, `[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]`},
		{`{"todos":[]}`, `[]`},
	}
	for _, c := range calls {
		res, err := tool.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(c.input), State: state})
		if err == nil {
			state, err = p.Apply(state, res.Update)
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := string(state[StateField]); got != c.want {
			t.Errorf("after %s: todos = %s, want %s", c.input, got, c.want)
		}
	}
}

func prepare(t testing.TB, plan string) *capabilities.Prepared {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, MarkerFile, plan)
	route := &router.Route{ID: "/support/[tenant]", Dir: dir, Agent: router.Agent{File: dir + "/agent.md"}}
	p, err := capabilities.Prepare(context.Background(), route, capabilities.Input{Markers: []capabilities.Marker{Marker()}, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestToolOutputDecodes(t *testing.T) {
	res, err := Tool().Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(`{"todos":[{"content":"x","status":"completed"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Todos []Todo }
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Todos, []Todo{{"x", Completed, ""}}) {
		t.Errorf("output todos = %v", out.Todos)
	}
}
