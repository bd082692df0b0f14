package capabilities

import (
	"context"

	"github.com/dawn-go/dawn/thread"
)

// ModelTurn is a model call the loop is about to make, as a BeforeModel
// hook sees it.
type ModelTurn struct {
	// RouteID is the id of the route running the call.
	RouteID string
	// Messages is the conversation the call would send after the system
	// prompt: the thread's messages, or what an earlier hook made of them.
	// Do not modify it.
	Messages []thread.Message
	// State is the thread's state. Do not modify it.
	State thread.State
	// Tokens estimates the input tokens of the call with msgs in place of
	// Messages: the system prompt, the tool list and the per-turn state
	// included.
	Tokens func(msgs []thread.Message) int
	// Complete asks a model for one answer to convo after the system
	// prompt system, with no tools: model is a model name as agent.md
	// writes it ("openai:gpt-4o-mini"), or "" for the route's model. It is
	// nil where the run can reach no model.
	Complete func(ctx context.Context, model, system string, convo []thread.Message) (string, error)
}

// ModelView is what a BeforeModel hook makes of a model call.
type ModelView struct {
	// Messages is the conversation to send in place of ModelTurn.Messages,
	// or nil to send it unchanged.
	Messages []thread.Message
	Effect
}

// ToolOutputStore keeps the full text of large tool outputs with the run's
// thread, in the app's store, so that a run on any replica sharing the
// store can read them back; they are deleted with the thread. The runtime
// lends it to hooks and tools as Invocation.Outputs.
type ToolOutputStore interface {
	// Put keeps text, the output of a call of tool, under id, which must
	// be new to the thread.
	Put(ctx context.Context, id, tool string, text []byte) error
	// Read returns at most limit bytes of the output kept under id from
	// byte offset on; ok is false when the thread keeps no output id.
	Read(ctx context.Context, id string, offset, limit int64) (page ToolOutputPage, ok bool, err error)
}

// ToolOutputPage is part of a stored tool output.
type ToolOutputPage struct {
	// Tool is the tool whose output it is.
	Tool string
	// Data is the bytes read; Total the output's whole size in bytes.
	Data  []byte
	Total int64
}
