package capabilities

import (
	"context"
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
	// BeforeTool runs before each tool call of the route, with the app-wide
	// values capabilities asked the runtime to remember (see
	// Resolution.Remember). An Effect with Interrupt parks the run before
	// the call; one with Refuse set skips the call and gives the model
	// Refusal as its result. Not called for a call whose interrupt was
	// just answered.
	BeforeTool func(s thread.State, call thread.ToolCall, app thread.State) Effect
	// BeforeToolCtx is BeforeTool for a hook that reads the app's store
	// to decide: ctx carries the call's Invocation (InvocationFrom), whose
	// Items is the store, or nil where the run lends none. It runs after
	// BeforeTool, when the hooks set both.
	BeforeToolCtx func(ctx context.Context, s thread.State, call thread.ToolCall, app thread.State) Effect
	// Resolve turns a person's answer to an interrupt this hook's route
	// raised into what the answer does (see Resolution): what the held-back
	// call does, or, for an interrupt raised after call ran (in.After),
	// what the run does next. s is the parked state. handled is false for
	// an interrupt the hook did not raise. An error is the person's mistake
	// (an unknown decision, say) and is shown to them; nothing changes.
	Resolve func(s thread.State, in Interrupt, call thread.ToolCall, a Answer) (res Resolution, handled bool, err error)
	// AfterTool runs after each tool call, with the state before and after
	// the call's own update. A Note is appended to a failed call's error
	// text. An Effect with Interrupt parks the run once the other calls of
	// the turn have run: the call's result is already in the history, and
	// Resolve's answer says what happens next. A run that cannot park (one
	// whose state nobody saves) drops the Interrupt and acts on the
	// Effect's Stop instead, so a hook sets Stop as its fallback.
	AfterTool func(before, after thread.State, ev ToolEvent) Effect
	// Final runs when the model answers without calling tools. Reject sends
	// Note back to the model as a message and the loop goes on.
	Final func(s thread.State, answer string) Effect
	// Signal handles a supervisor signal ("pause", "cancel") at a step
	// boundary.
	Signal func(s thread.State, signal string) Effect
	// BeforeModel runs before each model call of the loop with the
	// conversation the call would send (see ModelTurn), and returns the
	// conversation to send in its place (nil keeps it), as a context
	// budget replaces older turns by a summary. The thread's own messages
	// never change. A non-empty Effect.Update is applied and saved as a
	// step of its own before the call, with Effect.Events emitted first.
	// An error ends the run. Hooks of several capabilities run in marker
	// order, each on the conversation the one before returned.
	BeforeModel func(ctx context.Context, turn ModelTurn) (ModelView, error)
	// ToolOutput runs on each successful tool call's output before the
	// model sees it: text is the output as the model would see it, and
	// shown, when ok, is what the model sees in its place (a preview of
	// an output stored elsewhere, say). The tool_result event keeps the
	// full output. ctx carries the call's Invocation (InvocationFrom).
	ToolOutput func(ctx context.Context, ev ToolEvent, text string) (shown string, ok bool)
	// Edited runs when a person changes the thread's state outside a run
	// (a state update), with the state before and after the change, and
	// returns fields to set with it in the same checkpoint (nil for none),
	// as planning records a person's change of the todos as a revision.
	Edited func(before, after thread.State) thread.State
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
	// Interrupt, from BeforeTool or AfterTool, parks the run until a person
	// answers.
	Interrupt *Interrupt
	// Refuse, from BeforeTool, skips the call: the model gets Refusal as
	// the call's result.
	Refuse  bool
	Refusal string
}
