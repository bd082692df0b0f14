package capabilities

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/dawn-go/dawn/thread"
	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is something a model can call.
type Tool interface {
	// Spec describes the tool to the model.
	Spec() ToolSpec
	// Call runs the tool. A returned error is shown to the model as the
	// tool's error result; it never ends the run.
	Call(ctx context.Context, inv Invocation) (Result, error)
}

// ToolSpec is a tool's name, description and the JSON Schema of its input,
// and how the runtime may call it.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
	// Idempotent says that running the call again with the same input has
	// no effect beyond the first run's. A person's approved call that was
	// cut off by a crash is then run again instead of being reported to the
	// model as started with an unknown outcome. See Idempotent.
	Idempotent bool `json:"-"`
	// Timeout bounds one call; zero leaves it to the app (tools.timeout in
	// dawn.yaml, else the runtime's default). An MCP server's timeout:
	// setting lands here.
	Timeout time.Duration `json:"-"`
}

// Idempotent returns t declared idempotent (ToolSpec.Idempotent): after a
// crash cut an approved call of it off, the call runs again.
func Idempotent(t Tool) Tool { return idempotentTool{t} }

type idempotentTool struct{ Tool }

func (t idempotentTool) Spec() ToolSpec {
	s := t.Tool.Spec()
	s.Idempotent = true
	return s
}

// Invocation is one call of a tool.
type Invocation struct {
	// CallID is the model's id for the call.
	CallID string
	// ThreadID is the thread of the run calling the tool (a subagent's is
	// its parent's), or "" in a call no run hosts.
	ThreadID string
	// RunID is the run calling the tool (a subagent's is its parent's),
	// or "" in a call no run hosts.
	RunID string
	// RouteID is the id of the route running the tool.
	RouteID string
	// Params are the route's dynamic segment values (tenant=acme).
	Params map[string]string
	// Input is the JSON input the model sent.
	Input json.RawMessage
	// State is the thread's state before the call. Do not modify it.
	State thread.State
	// Steps, when set, runs tasks on fresh agents and publishes events on
	// the run's stream for the tool, as the harness's parallel plans run
	// their items. The runtime lends it to the tools of a run's own route;
	// it is nil in subagents, in the agents it runs, and in a call no run
	// hosts.
	Steps StepRunner
	// Items is the app's key-value store, or nil in a call no run hosts.
	Items ItemStore
	// Outputs keeps large tool outputs with the run's thread, or is nil in
	// a call no run hosts.
	Outputs ToolOutputStore
	// Tools calls the route's other tools by name, as the plan harness
	// runs a verifier, or is nil in a call no run hosts.
	Tools ToolCaller
}

// Result is what a tool call produced.
type Result struct {
	// Output is the JSON value shown to the model and sent in tool_result
	// events. A JSON string is shown to the model as plain text.
	Output json.RawMessage
	// Update holds state fields to change, applied through each field's
	// reducer after the call. Nil means no change.
	Update thread.State
	// Delegation is set by the runtime on the result of a task call whose
	// subagent finished: who ran it and the state it ended with.
	Delegation *Delegation
}

// Delegation is what a task call's subagent left when it finished, for
// the capabilities of the route that delegated (ToolEvent.Delegation), as
// the plan harness nests a subagent's plan under the parent's plan item.
type Delegation struct {
	Subagent string
	RouteID  string
	// Values is the subagent's final state. Do not modify it.
	Values thread.State
	Answer string
}

type invocationKey struct{}

// InvocationFrom returns the invocation of the tool running with ctx, so a
// typed tool function can read the route params or the call id.
func InvocationFrom(ctx context.Context) (Invocation, bool) {
	inv, ok := ctx.Value(invocationKey{}).(Invocation)
	return inv, ok
}

// WithInvocation returns a context that carries inv for InvocationFrom.
func WithInvocation(ctx context.Context, inv Invocation) context.Context {
	return context.WithValue(ctx, invocationKey{}, inv)
}

// InputError is returned by a tool whose input does not match its schema.
type InputError struct {
	Tool string
	Msg  string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("invalid input for tool %q: %s", e.Tool, e.Msg)
}

// Func makes a Tool from a typed Go function. The input schema is derived
// from In (use `json` tags for names and `jsonschema` tags for descriptions).
// Input is validated against the schema before fn runs; a mismatch is an
// InputError the model sees. Out is encoded as JSON for the model.
//
// Func panics if In has no JSON Schema (for example a channel type), which
// is a programming error found at start-up.
func Func[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("capabilities.Func %q: cannot derive input schema from %s: %v", name, reflect.TypeFor[In](), err))
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("capabilities.Func %q: input schema does not resolve: %v", name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("capabilities.Func %q: %v", name, err))
	}
	return &funcTool[In, Out]{
		spec:     ToolSpec{Name: name, Description: description, Schema: raw},
		resolved: resolved,
		fn:       fn,
	}
}

type funcTool[In, Out any] struct {
	spec     ToolSpec
	resolved *jsonschema.Resolved
	fn       func(context.Context, In) (Out, error)
}

func (t *funcTool[In, Out]) Spec() ToolSpec { return t.spec }

func (t *funcTool[In, Out]) Call(ctx context.Context, inv Invocation) (Result, error) {
	input := inv.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(input, &generic); err != nil {
		return Result{}, &InputError{Tool: t.spec.Name, Msg: "input is not valid JSON: " + err.Error()}
	}
	if err := t.resolved.Validate(generic); err != nil {
		return Result{}, &InputError{Tool: t.spec.Name, Msg: err.Error()}
	}
	var in In
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, &InputError{Tool: t.spec.Name, Msg: err.Error()}
	}
	out, err := t.fn(WithInvocation(ctx, inv), in)
	if err != nil {
		return Result{}, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return Result{}, fmt.Errorf("tool %q: cannot encode output: %w", t.spec.Name, err)
	}
	return Result{Output: raw}, nil
}
