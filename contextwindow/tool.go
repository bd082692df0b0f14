package contextwindow

import (
	"context"
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// CompactToolName is the tool that lets the model ask for a compaction
// (context.compact_tool).
const CompactToolName = "compactConversation"

// compactTool asks for a compaction before the model's next turn: it sets
// Compaction.Requested, and the BeforeModel hook compacts then.
type compactTool struct{}

func (compactTool) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{
		Name:        CompactToolName,
		Description: "Condense the earlier conversation into a summary before your next turn, keeping the latest turns as they are. Use it when the conversation has grown long and its older parts are no longer needed word for word.",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Idempotent:  true,
	}
}

func (compactTool) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	st, err := readCompaction(inv.State)
	if err != nil {
		return capabilities.Result{}, err
	}
	st.Requested = true
	raw, err := json.Marshal(st)
	if err != nil {
		return capabilities.Result{}, err
	}
	out, _ := json.Marshal("The earlier conversation will be condensed into a summary before your next turn.")
	return capabilities.Result{Output: out, Update: thread.State{Field: raw}}, nil
}
