package capabilities

import (
	"context"
	"encoding/json"
	"errors"
)

// ToolCaller calls a tool of the run's route by name, outside any model
// turn, as the plan harness runs a plan item's verifier (a registered tool,
// or a command through the route's runBash). The runtime lends one to
// each tool call of a route (Invocation.Tools); it is nil in a call no run
// hosts. The call runs under the tool's own deadline, with the state the
// calling tool was given; its state update, if any, is returned but not
// applied, and no event is sent for it.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, input json.RawMessage) (Result, error)
}

// ErrNoTool is the error of ToolCaller.CallTool for a name the route has no
// tool of.
var ErrNoTool = errors.New("the route has no tool of that name")
