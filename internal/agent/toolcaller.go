package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// toolCaller is the capabilities.ToolCaller the loop lends each tool call
// of its route: it calls another of the route's tools by name with the
// state the calling tool was given, under that tool's deadline, and sends
// no event for it.
type toolCaller struct {
	l      *loop
	callID string // the calling tool's call
	state  thread.State
}

func (c toolCaller) CallTool(ctx context.Context, name string, input json.RawMessage) (capabilities.Result, error) {
	var tool capabilities.Tool
	for _, t := range c.l.tools {
		if t.Spec().Name == name {
			tool = t
			break
		}
	}
	if tool == nil || name == capabilities.ReservedToolName {
		return capabilities.Result{}, fmt.Errorf("%w: %q", capabilities.ErrNoTool, name)
	}
	inv := capabilities.Invocation{CallID: c.callID + "/" + name, ThreadID: c.l.cfg.ThreadID, RunID: c.l.cfg.RunID, RouteID: c.l.cfg.Route.Route.ID, Params: c.l.cfg.Params, Input: input, State: c.state, Items: c.l.host.Items(), Outputs: c.l.cfg.Outputs, Tools: c}
	return c.l.callTool(ctx, tool, inv)
}
