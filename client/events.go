package client

import (
	"encoding/json"

	"github.com/dawn-go/dawn/stream"
)

// Event types of a run's stream. A subagent's events reach its parent's
// stream with SubagentPrefix: "subagent.plan_update".
const (
	EventChunk          = stream.TypeChunk
	EventToolCall       = stream.TypeToolCall
	EventToolResult     = stream.TypeToolResult
	EventPlanUpdate     = "plan_update"
	EventAnswerRejected = stream.TypeAnswerRejected
	EventModelCall      = stream.TypeModelCall
	// EventContextCompacted: older turns were replaced by a summary
	// before a model call (data: before_tokens, after_tokens,
	// summarized_messages).
	EventContextCompacted = stream.TypeContextCompacted
	EventDone             = stream.TypeDone
	SubagentPrefix        = "subagent."
)

// Event types of a delegated subagent (a task tool call) on its parent's
// stream, Dawn's set. Their data holds the Subagent fields beside its own.
// The subagent's other events come with the SubagentPrefix added to their
// type: "subagent.plan_update", "subagent.model_call".
const (
	EventSubagentStart      = "subagent.start"       // data: Subagent
	EventSubagentMessage    = "subagent.message"     // data: SubagentMessageEvent
	EventSubagentToolCall   = "subagent.tool_call"   // data: SubagentToolCallEvent
	EventSubagentToolResult = "subagent.tool_result" // data: SubagentToolResultEvent
	EventSubagentEnd        = "subagent.end"         // data: SubagentEndEvent
)

// SubagentMessageEvent is the data of a subagent.message event: a piece
// of a subagent's answer.
type SubagentMessageEvent struct {
	Subagent
	Chunk string `json:"chunk"`
}

// SubagentToolCallEvent is the data of a subagent.tool_call event. Name
// repeats Tool for clients of earlier releases.
type SubagentToolCallEvent struct {
	Subagent
	ID    string          `json:"id"`
	Tool  string          `json:"tool"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// SubagentToolResultEvent is the data of a subagent.tool_result event. A
// failed call has a null Output and an Error.
type SubagentToolResultEvent struct {
	Subagent
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error,omitempty"`
}

// SubagentEndEvent is the data of a subagent.end event: the subagent's
// answer, or the error it failed with.
type SubagentEndEvent struct {
	Subagent
	FinalMessage string `json:"final_message,omitempty"`
	Error        string `json:"error,omitempty"`
}

// ChunkEvent is the data of a chunk event: a piece of the model's answer,
// sent as a bare JSON string (data: "Hello"), as Dawn sends it.
type ChunkEvent string

// AnswerRejectedEvent is the data of an answer_rejected event: the
// finalization gate refused the answer whose chunk events came right before
// it, so a client drops that text; the run goes on.
type AnswerRejectedEvent struct {
	Reason string `json:"reason"`
}

// ModelCallEvent is the data of a model_call event, sent after each model
// call that answered. DurationMS covers the whole call, retries and
// fallbacks included. InputTokens and OutputTokens are nil when the
// provider reported no token usage.
type ModelCallEvent struct {
	Model        string `json:"model"`
	DurationMS   int64  `json:"duration_ms"`
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// ToolCallEvent is the data of a tool_call event. Decode Input into the
// route's input type for the tool named Name.
type ToolCallEvent struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResultEvent is the data of a tool_result event. A failed call has a
// null Output and an Error.
type ToolResultEvent struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error,omitempty"`
}

// DoneEvent is the data of the done event that ends a stream. Output holds
// the final state values, {"error":"..."} for a failed run, or
// {"cancelled":true}.
type DoneEvent struct {
	Output json.RawMessage `json:"output"`
}

// Subagent names the subagent a "subagent." event comes from.
type Subagent struct {
	// CallID is the id of the parent's task tool call.
	CallID string `json:"call_id"`
	// Name is the subagent's name, its folder name.
	Name string `json:"subagent"`
	// RouteID is the subagent's route id.
	RouteID string `json:"route_id"`
	// Depth is 1 for a subagent of the run's route, 2 for its subagent, ...
	Depth int `json:"depth"`
}
