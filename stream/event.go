package stream

import "encoding/json"

// Event types that Dawn itself emits. Capabilities add their own (for example
// "plan_update"), and subagent events carry the SubagentPrefix.
const (
	TypeChunk      = "chunk"
	TypeToolCall   = "tool_call"
	TypeToolResult = "tool_result"
	TypeDone       = "done"
	TypeError      = "error"
	// TypeAnswerRejected follows a final answer that a capability's
	// finalization gate refused (the harness, while plan items are open).
	// Its data is {"reason": "…"}. The answer's text was already streamed as
	// the chunk events right before it; clients discard that text, and the
	// model goes on.
	TypeAnswerRejected = "answer_rejected"
	// TypeModelRetry reports a model call that failed and is tried again,
	// by the same model after a wait or by the next model of a fallback
	// list: {"attempt":1,"model":"…","next":"…","error":"…","wait_ms":1000,
	// "status":429}.
	TypeModelRetry = "model_retry"
	// TypeModelCall follows each model call that answered:
	// {"model":"openai:gpt-4o-mini","duration_ms":123,"input_tokens":21,
	// "output_tokens":9,"finish_reason":"stop"}. The token counts are left
	// out when the provider reports none, finish_reason when it is empty.
	// duration_ms covers the whole call, retries and fallbacks included.
	TypeModelCall = "model_call"
	// TypeInterrupt says the run parked for a person's decision. Its data
	// is the interrupt: {"interruptId", "type", "kind", "detail", "callId"}.
	TypeInterrupt = "interrupt"
	// TypeContextCompacted says older turns of the conversation were
	// replaced by a summary before a model call, to keep its input under
	// the route's context budget: {"before_tokens":9120,"after_tokens":2310,
	// "summarized_messages":41}, the request's estimated input tokens
	// before and after, and how many messages the summary newly covers.
	TypeContextCompacted = "context_compacted"

	// SubagentPrefix starts the type of every event forwarded from a
	// subagent to its parent's stream: "subagent.plan_update".
	SubagentPrefix = "subagent."
)

// Dawn's events of a delegated child (a task tool call), on its parent's
// stream. Each one's data holds the child's identity (Subagent's fields:
// call_id, subagent, route_id, depth) beside its own fields. Every other
// event of the child reaches the parent as "subagent."+its type, with the
// identity added (see Forward).
const (
	// TypeSubagentStart opens a child's events: the identity alone. A
	// child that parked and is resumed starts again.
	TypeSubagentStart = "subagent.start"
	// TypeSubagentMessage carries a piece of the child's answer as it
	// streams: {"chunk": "…"}.
	TypeSubagentMessage = "subagent.message"
	// TypeSubagentToolCall is a child's tool call: {"id", "tool", "input"},
	// and "name" (the same as tool; kept for earlier Go clients).
	TypeSubagentToolCall = "subagent.tool_call"
	// TypeSubagentToolResult is a child's tool result: {"id", "tool",
	// "output"}, "error" for a failed call, and "name" as for
	// TypeSubagentToolCall.
	TypeSubagentToolResult = "subagent.tool_result"
	// TypeSubagentEnd closes a child's events: {"final_message": "…"} when
	// it answered, {"error": "…"} when it failed. A child that parks for
	// a person's decision, or is cancelled, has no end.
	TypeSubagentEnd = "subagent.end"
)

// Event is one item of a run's stream. ID is assigned when the event is
// published to a run's log and increases by one per event within a run; it is
// zero before that. Data is a JSON object.
type Event struct {
	ID   int64           `json:"id"`
	Type string          `json:"event"`
	Data json.RawMessage `json:"data"`
}

// New builds an event of type typ whose data is v encoded as JSON. It panics
// only if v cannot be encoded, which is a programming error.
func New(typ string, v any) Event {
	data, err := json.Marshal(v)
	if err != nil {
		panic("stream.New: " + typ + ": " + err.Error())
	}
	return Event{Type: typ, Data: data}
}
