package agent

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/dawn-go/dawn/capabilities"
)

// DefaultToolTimeout bounds one tool call when neither the tool
// (ToolSpec.Timeout) nor Config.ToolTimeout sets a deadline.
const DefaultToolTimeout = 2 * time.Minute

// abandonAfter is how long a call whose deadline passed (or whose run was
// cancelled) gets to return after its context ended before the loop stops
// waiting for it: a tool that ignores its context is left behind rather
// than left to hold the thread.
const abandonAfter = 2 * time.Second

// ToolTimeoutError is a tool call that did not return within its deadline.
// The model sees it as the call's error; the run goes on.
type ToolTimeoutError struct {
	Tool    string
	Timeout time.Duration
}

func (e *ToolTimeoutError) Error() string {
	return fmt.Sprintf("tool %q did not finish within %s and was given up; whether it had an effect is unknown. "+
		"The deadline is the tool's MCP server timeout: in dawn.yaml, else tools.timeout in dawn.yaml (default %s)", e.Tool, e.Timeout, DefaultToolTimeout)
}

// timeout is the deadline of one call of tool.
func (l *loop) timeout(tool capabilities.Tool) time.Duration {
	if d := tool.Spec().Timeout; d > 0 {
		return d
	}
	if l.cfg.ToolTimeout > 0 {
		return l.cfg.ToolTimeout
	}
	return DefaultToolTimeout
}

// callTool runs tool with inv under the call's deadline. Past the deadline
// the tool's context ends; a tool that still does not return within
// abandonAfter is left running and the call fails with a
// ToolTimeoutError. A cancelled run gives up on the tool the same way. A
// tool that runs agents (Invocation.Steps) is bounded by their turn limits
// instead: its deadline is lifted at its first step.
func (l *loop) callTool(ctx context.Context, tool capabilities.Tool, inv capabilities.Invocation) (capabilities.Result, error) {
	limit := l.timeout(tool)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timedOut := &ToolTimeoutError{Tool: tool.Spec().Name, Timeout: limit}
	timer := time.AfterFunc(limit, func() { cancel(timedOut) })
	defer timer.Stop()
	if inv.Steps != nil {
		inv.Steps = unbounded{StepRunner: inv.Steps, lift: sync.OnceFunc(func() { timer.Stop() })}
	}
	type outcome struct {
		res capabilities.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: fmt.Errorf("tool %q panicked: %v", tool.Spec().Name, r)}
				if l.cfg.Depth == 0 {
					debug.PrintStack()
				}
			}
			done <- o
		}()
		o.res, o.err = tool.Call(capabilities.WithInvocation(ctx, inv), inv)
	}()
	returned := func(o outcome) (capabilities.Result, error) {
		if context.Cause(ctx) == timedOut {
			return capabilities.Result{}, timedOut
		}
		return o.res, o.err
	}
	select {
	case o := <-done:
		return returned(o)
	case <-ctx.Done():
	}
	select {
	case o := <-done:
		return returned(o)
	case <-time.After(abandonAfter):
		if cause := context.Cause(ctx); cause != timedOut {
			return capabilities.Result{}, fmt.Errorf("tool %q did not stop within %s after the run was cancelled; it was given up: %w", tool.Spec().Name, abandonAfter, cause)
		}
		return capabilities.Result{}, timedOut
	}
}

// unbounded is the StepRunner a tool gets: its first step lifts the call's
// deadline.
type unbounded struct {
	capabilities.StepRunner
	lift func()
}

func (u unbounded) RunStep(ctx context.Context, callID string, target capabilities.StepTarget, task string) (string, error) {
	u.lift()
	return u.StepRunner.RunStep(ctx, callID, target, task)
}
