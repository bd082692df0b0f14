package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// OutcomeUnknown is the text the model gets as the result of an approved
// call that a crash cut off after it started: the tool may or may not have
// done its work. A tool_result event with "outcome":"unknown" tells the
// client.
const OutcomeUnknown = "this call was approved and had started when the server stopped before recording its result, so its outcome is unknown: it may or may not have taken effect. It was not run again; check its effect before calling it again"

// CutOffUnknown is OutcomeUnknown for a call that needed no approval,
// recorded before it ran (Config.RecordStarted) in a run that another
// server continued after the one running it stopped.
const CutOffUnknown = "this call had started when the server running it stopped before recording its result, so its outcome is unknown: it may or may not have taken effect. It was not run again; check its effect before calling it again"

// markStarted saves, before the held-back calls of a resumed turn run,
// that they are about to run (capabilities.StartedKey), in one step with
// the answers that let them run (the parked state without its interrupts).
// A crash from here on leaves a thread that knows those calls may have
// run, instead of one parked on the same interrupts, whose second answer
// would run them again. Only the root run of a saved thread keeps the
// record; a parked subagent's calls are covered by its task call.
//
// A run cancelled before any call started saves nothing: the thread stays
// parked and its interrupts can be answered again.
func (l *loop) markStarted(ctx context.Context, calls []thread.ToolCall) error {
	if !l.cfg.Park || l.cfg.Depth > 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	list := make([]capabilities.StartedCall, 0, len(calls))
	runs := false
	for _, c := range calls {
		e := capabilities.StartedCall{ID: c.ID, Name: c.Name}
		if r, ok := l.cfg.Resolved[c.ID]; ok && !r.Run {
			e.Refusal = cmp.Or(r.Refusal, "a person declined this call")
		} else {
			runs = true
		}
		list = append(list, e)
	}
	if !runs {
		return nil // nothing with an effect runs: after a crash it may be asked again
	}
	return l.saveStarted(ctx, list)
}

// recordTurn saves, before the tool calls of a model turn run, the turn so
// far (the assistant message with its calls, and the turn's events) with
// those calls listed as started (capabilities.StartedKey, each Unapproved),
// when Config.RecordStarted asks for it. A run continued after a crash
// then knows which calls may have run, and does not run them blindly
// again (settleStarted). It costs one more commit per tool turn. As
// markStarted, only the root run of a saved thread records.
func (l *loop) recordTurn(ctx context.Context, calls []thread.ToolCall) error {
	if !l.cfg.RecordStarted || !l.cfg.Park || l.cfg.Depth > 0 || len(calls) == 0 {
		return nil
	}
	list := make([]capabilities.StartedCall, len(calls))
	for i, c := range calls {
		list[i] = capabilities.StartedCall{ID: c.ID, Name: c.Name, Unapproved: true}
	}
	return l.saveStarted(ctx, list)
}

// saveStarted checkpoints the messages not saved yet with list as the
// state's capabilities.StartedKey.
func (l *loop) saveStarted(ctx context.Context, list []capabilities.StartedCall) error {
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	next := l.state.Clone()
	next[capabilities.StartedKey] = raw
	if err := l.host.Checkpoint(ctx, l.msgs[l.pending:], next); err != nil {
		return err
	}
	l.pending, l.state = len(l.msgs), next
	return nil
}

// withoutStarted returns state without capabilities.StartedKey: the
// turn's results are in the messages saved with it.
func withoutStarted(state thread.State) thread.State {
	if _, ok := state[capabilities.StartedKey]; !ok {
		return state
	}
	next := state.Clone()
	delete(next, capabilities.StartedKey)
	return next
}

// settleStarted answers the calls of the conversation's last turn that a
// crash cut off after markStarted: a refused call gets its refusal, a call
// of an idempotent tool runs again as approved, and any other call gets
// OutcomeUnknown as its error, shown to the model, and a tool_result event
// with "outcome":"unknown". Their tool messages join the conversation and
// the record leaves the state. A thread without the record gets nothing.
func (l *loop) settleStarted(ctx context.Context) error {
	var list []capabilities.StartedCall
	ok, err := l.state.Decode(capabilities.StartedKey, &list)
	if err != nil {
		return fmt.Errorf("the saved %s value cannot be read: %w", capabilities.StartedKey, err)
	}
	if !ok {
		return nil
	}
	l.state = withoutStarted(l.state)
	byID := map[string]capabilities.StartedCall{}
	for _, e := range list {
		byID[e.ID] = e
	}
	// The calls run again are approved ones: no hook asks again, and one
	// that would park after the call stops the run instead.
	saved, park := l.cfg.Resolved, l.cfg.Park
	l.cfg.Resolved, l.cfg.Park = map[string]capabilities.Resolution{}, false
	defer func() { l.cfg.Resolved, l.cfg.Park = saved, park }()
	for _, c := range unanswered(l.msgs) {
		e, known := byID[c.ID]
		switch {
		case known && e.Refusal != "":
			l.cfg.Resolved[c.ID] = capabilities.Resolution{Refusal: e.Refusal}
		case known && l.idempotent(c.Name):
			l.cfg.Resolved[c.ID] = capabilities.Resolution{Run: true}
		default:
			text := OutcomeUnknown
			if e.Unapproved || !known {
				text = CutOffUnknown
			}
			if err := l.unknownOutcome(c, text); err != nil {
				return err
			}
			continue
		}
		reply, _, err := l.dispatch(ctx, c, nil)
		if err != nil {
			return err
		}
		l.msgs = append(l.msgs, *reply)
	}
	return nil
}

// unknownOutcome answers call c, whose outcome a crash made unknown, with
// text; a task call's parked subagent is dropped with it.
func (l *loop) unknownOutcome(c thread.ToolCall, text string) error {
	next, err := withFrame(l.state, c.ID, nil)
	if err != nil {
		return err
	}
	l.state = next
	l.emit(stream.New(stream.TypeToolResult, map[string]any{"id": c.ID, "name": c.Name, "output": nil, "error": text, "outcome": "unknown"}))
	l.msgs = append(l.msgs, thread.Message{Role: thread.RoleTool, ToolCallID: c.ID, Name: c.Name, IsError: true, Content: "error: " + text})
	return nil
}

// idempotent reports whether the route's tool name declares itself
// idempotent (capabilities.ToolSpec.Idempotent).
func (l *loop) idempotent(name string) bool {
	for _, t := range l.tools {
		if spec := t.Spec(); spec.Name == name {
			return spec.Idempotent
		}
	}
	return false
}
