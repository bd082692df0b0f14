package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// TaskTargets is what the task tool of route r may name, by name: its
// subagent routes (their route ids) and its remote subagents (their
// addresses). The route has the task tool when it is not empty.
func TaskTargets(r *capabilities.Prepared) map[string]string {
	if len(r.RemoteSubagents) == 0 {
		return r.Route.Subagents
	}
	all := make(map[string]string, len(r.Route.Subagents)+len(r.RemoteSubagents))
	for name, id := range r.Route.Subagents {
		all[name] = id
	}
	for name, sub := range r.RemoteSubagents {
		all[name] = sub.Address()
	}
	return all
}

// runRemote runs task call c on sub, a subagent that runs outside the app:
// its events are framed by subagent.start and subagent.end as a route
// subagent's are, and a question it asks parks the run with the call held
// back (an Interrupt.InCall), to run again with the answer.
func (l *loop) runRemote(ctx context.Context, c thread.ToolCall, state thread.State, in taskInput, sub capabilities.RemoteSubagent) (_ capabilities.Result, err error) {
	who := stream.Subagent{CallID: c.ID, Name: in.Subagent, RouteID: sub.Address(), Depth: l.cfg.Depth + 1}
	task := capabilities.RemoteTask{
		Input: in.Input,
		Park:  l.cfg.Park,
		Emit:  func(e stream.Event) { l.emit(stream.Forward(e, who)) },
	}
	frames := map[string]capabilities.SubagentFrame{}
	if _, err := state.Decode(capabilities.SubagentsKey, &frames); err != nil {
		return capabilities.Result{}, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.SubagentsKey, err)
	}
	if frame, ok := frames[c.ID]; ok {
		task.Resume = frame.Remote
	}
	if r, ok := l.cfg.Resolved[c.ID]; ok {
		task.Answer = r.Answer
	}
	if l.cfg.Tracer != nil {
		var end func(error)
		ctx, end = l.cfg.Tracer.Subagent(ctx, in.Subagent, who.RouteID, who.Depth)
		defer func() { end(err) }()
	}
	l.emit(stream.SubagentStart(who))
	answer, err := sub.Run(ctx, task)
	if park, ok := errors.AsType[*capabilities.ParkCall](err); ok {
		if !l.cfg.Park {
			return capabilities.Result{}, fmt.Errorf("subagent %q asks a question that cannot be put to a person here: %w", in.Subagent, err)
		}
		ask := park.Interrupt
		ask.InCall, ask.Path = true, nil
		return capabilities.Result{}, &parkedSubagent{
			frame:      capabilities.SubagentFrame{Subagent: in.Subagent, Remote: park.Resume},
			interrupts: []capabilities.Interrupt{ask},
			inCall:     true,
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			l.emit(stream.SubagentEnd(who, "", err))
		}
		return capabilities.Result{}, fmt.Errorf("subagent %q failed: %w", in.Subagent, err)
	}
	l.emit(stream.SubagentEnd(who, answer, nil))
	out, _ := json.Marshal(answer)
	return capabilities.Result{Output: out, Delegation: &capabilities.Delegation{Subagent: in.Subagent, RouteID: who.RouteID, Answer: answer}}, nil
}
