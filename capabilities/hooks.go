package capabilities

import (
	"encoding/json"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Hooks let a capability steer the agent loop at fixed points, for a harness
// that owns the plan instead of trusting the model. Every field is optional.
// Each hook returns an Effect; the loop applies its Update through the
// fields' reducers, emits its Events, and acts on Stop, Reject and Note.
type Hooks struct {
	// Start runs once before the first model turn, with the run's new input
	// messages.
	Start func(s thread.State, input []thread.Message) Effect
	// AfterTool runs after each tool call, with the state before and after
	// the call's own update. A Note is appended to a failed call's error text.
	AfterTool func(before, after thread.State, ev ToolEvent) Effect
	// Final runs when the model answers without calling tools. Reject sends
	// Note back to the model as a message and the loop goes on.
	Final func(s thread.State, answer string) Effect
	// Signal handles a supervisor signal ("pause", "cancel") at a step
	// boundary.
	Signal func(s thread.State, signal string) Effect
}

// Effect is what a hook asks of the loop.
type Effect struct {
	Update thread.State
	Events []stream.Event
	// Note is text for the model (see Hooks).
	Note string
	// Reject refuses a final answer (Final only).
	Reject bool
	// Stop ends the run cleanly after the current step, with StopReason.
	Stop       bool
	StopReason string
	// AnswerMeta, from Final, is stored on the final answer as its
	// metadata (thread.Message.Meta) when the answer is accepted, such as
	// the harness's plan snapshot; NoteMeta on the Note message when it is
	// rejected, such as the harness's mark. The hooks' keys are merged in
	// marker order.
	AnswerMeta, NoteMeta map[string]json.RawMessage
}
