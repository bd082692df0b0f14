package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
)

// interrupt_before and interrupt_after name the nodes of the agent graph
// a run parks at (see runner.Overrides): before "tools" and after "agent"
// are the same point, a model turn's tool calls about to run; after
// "tools" and before "agent" are the point after a tools step. "*" is
// both. A run does not park before its first model turn. The run parks
// with interrupts of kind "pause"; a run with command.resume, or with
// input null, goes on.

// pauses reads interrupt_before and interrupt_after into o.
func pauses(before, after json.RawMessage, o *runner.Overrides) error {
	for _, f := range []struct {
		field string
		raw   json.RawMessage
		// tools is the node whose choice means the point before the tools
		// run; the other node means the point after them.
		tools string
	}{{"interrupt_before", before, nodeTools}, {"interrupt_after", after, nodeAgent}} {
		if isNull(f.raw) {
			continue
		}
		var nodes []string
		var all string
		if json.Unmarshal(f.raw, &all) == nil && all == "*" {
			nodes = []string{nodeAgent, nodeTools}
		} else if err := json.Unmarshal(f.raw, &nodes); err != nil {
			return wire.BadBody(f.field + ` must be a list of nodes of the agent graph, like ["tools"], or "*"`)
		}
		for i, n := range nodes {
			switch n {
			case f.tools:
				o.PauseBeforeTools = true
			case nodeAgent, nodeTools:
				o.PauseAfterTools = true
			case "*":
				o.PauseBeforeTools, o.PauseAfterTools = true, true
			default:
				return wire.BadBody(f.field + "[" + strconv.Itoa(i) + "] " + strconv.Quote(n) + ` is not a node of the agent graph: its nodes are "agent" (a model turn) and "tools" (its tool calls)`)
			}
		}
	}
	return nil
}

// onlyPauses reports whether every interrupt pending is a pause.
func onlyPauses(pending []capabilities.Interrupt) bool {
	for _, in := range pending {
		if in.Kind != runner.PauseKind {
			return false
		}
	}
	return len(pending) > 0
}

// continuePaused makes a run with input null on a thread parked only at
// pauses the run that goes on past them, as LangGraph goes on from an
// interrupt_before or interrupt_after with input null.
func (s *dialect) continuePaused(ctx context.Context, run *lgRun, body lgRunBody) error {
	if run.resume != nil || !isNull(body.Input) {
		return nil
	}
	cp, err := s.host.Latest(ctx, run.ThreadID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	pending, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil || !onlyPauses(pending) {
		return nil
	}
	run.resume = json.RawMessage(`"continue"`)
	return nil
}
