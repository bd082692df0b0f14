package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// runCalls runs one turn's tool calls in order: their tool messages join
// the conversation and the interrupts they raise l.parked. A call a
// BeforeTool hook holds back for a person's decision gets no message: its
// interrupt is parked, as are those AfterTool hooks raised after a call ran.
// bad holds, per call, why its arguments are not JSON, or nil.
func (l *loop) runCalls(ctx context.Context, calls []thread.ToolCall, bad []error) error {
	for i, c := range calls {
		reply, ins, err := l.dispatch(ctx, c, bad[i])
		if err != nil {
			return err
		}
		l.parked = append(l.parked, ins...)
		if reply != nil {
			l.msgs = append(l.msgs, *reply)
		}
	}
	return nil
}

// dispatch runs one tool call and returns the tool message for the model;
// the state moves on with the call. A failing tool never ends the run: its
// error becomes the tool message. Only a hook's impossible update is an
// error.
//
// badArgs says why the call's arguments are not JSON; such a call fails
// with an input error without running the tool.
//
// A call a BeforeTool hook holds back returns its interrupt and no message;
// a task call whose subagent parked returns the subagent's interrupts. A
// call an AfterTool hook raised an interrupt after returns its message and
// that interrupt.
//
// The call goes through admit (may it run?), call (run it, or answer in its
// place), the tool's state update, and after (the AfterTool hooks, the
// tool_result event and the transformers).
func (l *loop) dispatch(ctx context.Context, c thread.ToolCall, badArgs error) (*thread.Message, []capabilities.Interrupt, error) {
	c, refusal, held, err := l.admit(ctx, c, badArgs)
	if err != nil || held != nil {
		return nil, held, err
	}
	ev := capabilities.ToolEvent{CallID: c.ID, Name: c.Name, Input: c.Input}
	if l.cfg.Tracer != nil {
		var end func(error)
		ctx, end = l.cfg.Tracer.Tool(ctx, c.Name, c.ID)
		defer func() { end(ev.Err) }()
	}
	res, err := l.call(ctx, c, refusal, badArgs)
	if parked, ok := errors.AsType[*parkedSubagent](err); ok {
		ins, err := l.parkTask(c, parked)
		return nil, ins, err
	}
	ev.Output, ev.Delegation = res.Output, res.Delegation
	next := l.state
	if err == nil && len(res.Update) > 0 {
		if next, err = l.cfg.Route.Apply(l.state, res.Update); err != nil {
			err = fmt.Errorf("tool %q returned a state update the route cannot take: %w", c.Name, err)
			next = l.state
		} else {
			ev.Update = res.Update
		}
	}
	ev.Err = err
	return l.after(ctx, c, ev, next)
}

// admit decides whether call c runs. A call held back before is answered:
// it runs (with the arguments a person edited) or is refused, as the answer
// says. Any other call with JSON arguments goes to the BeforeTool hooks,
// which may hold it back (held) or refuse it (refusal is what the model
// gets in its place).
func (l *loop) admit(ctx context.Context, c thread.ToolCall, badArgs error) (_ thread.ToolCall, refusal *string, held []capabilities.Interrupt, err error) {
	if r, ok := l.cfg.Resolved[c.ID]; ok {
		if l.state, err = l.resolutionUpdate(l.state, r); err != nil {
			return c, nil, nil, err
		}
		switch {
		case !r.Run:
			return c, &r.Refusal, nil, nil
		case len(r.Input) > 0:
			c.Input = r.Input
		}
		return c, nil, nil, nil
	}
	if badArgs != nil {
		return c, nil, nil, nil
	}
	in, refusal, err := l.beforeTool(ctx, c)
	if err != nil || in == nil {
		return c, refusal, nil, err
	}
	return c, nil, []capabilities.Interrupt{*in}, nil
}

// beforeTool asks the BeforeTool hooks about c. It returns the interrupt
// that holds c back, or the refusal the model gets in c's place.
func (l *loop) beforeTool(ctx context.Context, c thread.ToolCall) (in *capabilities.Interrupt, refusal *string, err error) {
	for _, h := range l.hooks {
		for _, ask := range l.befores(h) {
			eff := ask(ctx, l.state, c, l.host.App())
			if l.state, err = l.effect(l.state, eff); err != nil {
				return nil, nil, err
			}
			switch {
			case eff.Interrupt != nil && !l.cfg.Park:
				// Nobody saves this run's state, so it cannot park: the
				// call is refused and the model adapts.
				text := fmt.Sprintf("tool %q needs a person's approval, which cannot be asked for here; do the task without it or say that it needs approval", c.Name)
				return nil, &text, nil
			case eff.Interrupt != nil:
				in := raised(*eff.Interrupt, c.ID)
				return &in, nil, nil
			case eff.Refuse:
				text := eff.Refusal
				return nil, &text, nil
			}
		}
	}
	return nil, nil, nil
}

// before is a BeforeTool hook of either form.
type before func(ctx context.Context, s thread.State, c thread.ToolCall, app thread.State) capabilities.Effect

// befores returns h's BeforeTool hooks in the order they run: BeforeTool,
// then BeforeToolCtx, which gets the call's Invocation in its context.
func (l *loop) befores(h *capabilities.Hooks) []before {
	var out []before
	if h.BeforeTool != nil {
		out = append(out, func(_ context.Context, s thread.State, c thread.ToolCall, app thread.State) capabilities.Effect {
			return h.BeforeTool(s, c, app)
		})
	}
	if h.BeforeToolCtx != nil {
		out = append(out, func(ctx context.Context, s thread.State, c thread.ToolCall, app thread.State) capabilities.Effect {
			inv := capabilities.Invocation{CallID: c.ID, ThreadID: l.cfg.ThreadID, RunID: l.cfg.RunID, RouteID: l.cfg.Route.Route.ID, Params: l.cfg.Params, Input: c.Input, State: s, Items: l.host.Items(), Outputs: l.cfg.Outputs}
			return h.BeforeToolCtx(capabilities.WithInvocation(ctx, inv), s, c, app)
		})
	}
	return out
}

// raised is a hook's interrupt as the run parks with it: of the interrupt
// type, holding call callID, with an object as its detail.
func raised(in capabilities.Interrupt, callID string) capabilities.Interrupt {
	in.Type, in.CallID = capabilities.InterruptType, callID
	if len(in.Detail) == 0 {
		in.Detail = json.RawMessage("{}")
	}
	return in
}

// call runs c's tool, or gives the model refusal in its place, or fails c
// because its arguments are not JSON (badArgs).
func (l *loop) call(ctx context.Context, c thread.ToolCall, refusal *string, badArgs error) (capabilities.Result, error) {
	switch {
	case refusal != nil:
		out, _ := json.Marshal(*refusal) // a string always encodes
		return capabilities.Result{Output: out}, nil
	case badArgs != nil:
		msg := fmt.Sprintf("arguments are not valid JSON (%v); send one JSON object that matches the tool's input schema", badArgs)
		if text := preview(c.Input); strings.TrimSpace(text) != "" {
			msg += ". The arguments were: " + text
		}
		return capabilities.Result{}, &capabilities.InputError{Tool: c.Name, Msg: msg}
	}
	res, err := l.invoke(ctx, c, l.state)
	if _, parked := errors.AsType[*parkedSubagent](err); !parked && l.task != nil && c.Name == capabilities.ReservedToolName {
		// The subagent finished: it is parked no more.
		if cleared, ferr := withFrame(l.state, c.ID, nil); ferr == nil {
			l.state = cleared
		}
	}
	return res, err
}

// parkTask keeps the frame of task call c, whose subagent parked, and
// returns the subagent's interrupts with c on their path.
func (l *loop) parkTask(c thread.ToolCall, parked *parkedSubagent) ([]capabilities.Interrupt, error) {
	next, err := withFrame(l.state, c.ID, &parked.frame)
	if err != nil {
		return nil, err
	}
	l.state = next
	ins := make([]capabilities.Interrupt, len(parked.interrupts))
	for i, in := range parked.interrupts {
		if parked.inCall {
			ins[i] = raised(in, c.ID)
			continue
		}
		in.Path = append([]string{c.ID}, in.Path...)
		ins[i] = in
	}
	return ins, nil
}

// after ends call c, whose event ev says how it went and whose state
// update gave next: the AfterTool hooks see it, the tool_result and the
// transformers' events are emitted, and the hooks' effects apply. It
// returns the tool message, with the hooks' notes, and the interrupts the
// hooks raised after the call when the run can park (their fallback stop
// is then dropped).
func (l *loop) after(ctx context.Context, c thread.ToolCall, ev capabilities.ToolEvent, next thread.State) (*thread.Message, []capabilities.Interrupt, error) {
	var note string
	var effects []capabilities.Effect
	for _, h := range l.hooks {
		if h.AfterTool != nil {
			eff := h.AfterTool(l.state, next, ev)
			note = joinNote(note, eff.Note)
			effects = append(effects, eff)
		}
	}
	reply := l.reply(ctx, ev, note)
	for _, t := range l.cfg.Route.Transformers {
		for _, e := range t(ev) {
			l.emit(e)
		}
	}
	var ins []capabilities.Interrupt
	for _, eff := range effects {
		if eff.Interrupt != nil && l.cfg.Park {
			// The run parks after this turn: the hook's fallback stop is
			// not needed.
			in := raised(*eff.Interrupt, c.ID)
			in.After = true
			ins = append(ins, in)
			eff.Stop, eff.StopReason = false, ""
		}
		var err error
		if next, err = l.effect(next, eff); err != nil {
			return &reply, nil, err
		}
	}
	l.state = next
	return &reply, ins, nil
}

// reply is the tool message of the call ev reports, with note after it,
// and emits the call's tool_result event.
func (l *loop) reply(ctx context.Context, ev capabilities.ToolEvent, note string) thread.Message {
	reply := thread.Message{Role: thread.RoleTool, ToolCallID: ev.CallID, Name: ev.Name}
	if ev.Err != nil {
		reply.IsError = true
		reply.Content = joinNote("error: "+ev.Err.Error(), note)
		l.emit(stream.New(stream.TypeToolResult, map[string]any{"id": ev.CallID, "name": ev.Name, "output": nil, "error": ev.Err.Error()}))
		return reply
	}
	var size int
	reply.Content, size = l.shown(ctx, ev)
	l.emit(stream.New(stream.TypeToolResult, l.resultData(ev, reply.Content, size)))
	return reply
}

// resultData is the data of the tool_result event of the successful call
// ev, whose output the model was shown as shown. The event is fanned out
// to every subscriber and kept with the run, so an output over
// Config.MaxToolOutput is not carried whole: the event carries what the
// model saw (a stored output's preview names its id), flagged truncated
// with the size of its text, size.
func (l *loop) resultData(ev capabilities.ToolEvent, shown string, size int) any {
	if len(ev.Output) <= l.cfg.MaxToolOutput {
		return toolResultData{ID: ev.CallID, Name: ev.Name, Output: rawOrNull(ev.Output)}
	}
	return truncatedResultData{ID: ev.CallID, Name: ev.Name, Output: shown, OutputBytes: size, Truncated: true}
}

// toolCallData is the data of a tool_call event. The event data types are
// structs, not maps, as they are encoded on every call: their fields are in
// key order, so they encode as the maps they replace did.
type toolCallData struct {
	ID    string          `json:"id"`
	Input json.RawMessage `json:"input"`
	Name  string          `json:"name"`
}

// toolResultData is the data of a successful call's tool_result event.
type toolResultData struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
}

// truncatedResultData is toolResultData for an output over
// Config.MaxToolOutput: what the model was shown, and the output's size.
type truncatedResultData struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Output      string `json:"output"`
	OutputBytes int    `json:"output_bytes"`
	Truncated   bool   `json:"truncated"`
}

// keepNotes returns state keeping notes under capabilities.NotesKey when
// open says the turn they follow is still open, and without the key
// otherwise.
func keepNotes(state thread.State, notes []thread.Message, open bool) (thread.State, error) {
	_, had := state[capabilities.NotesKey]
	if !had && (!open || len(notes) == 0) {
		return state, nil
	}
	next := state.Clone()
	delete(next, capabilities.NotesKey)
	if open && len(notes) > 0 {
		raw, err := json.Marshal(notes)
		if err != nil {
			return state, err
		}
		next[capabilities.NotesKey] = raw
	}
	return next, nil
}

// withFrame returns state with the parked subagent frame of task call id
// set, or removed when frame is nil.
func withFrame(state thread.State, id string, frame *capabilities.SubagentFrame) (thread.State, error) {
	frames := map[string]capabilities.SubagentFrame{}
	if _, err := state.Decode(capabilities.SubagentsKey, &frames); err != nil {
		return state, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.SubagentsKey, err)
	}
	if _, ok := frames[id]; !ok && frame == nil {
		return state, nil
	}
	next := state.Clone()
	if frame == nil {
		delete(frames, id)
	} else {
		frames[id] = *frame
	}
	if len(frames) == 0 {
		delete(next, capabilities.SubagentsKey)
		return next, nil
	}
	raw, err := json.Marshal(frames)
	if err != nil {
		return state, err
	}
	next[capabilities.SubagentsKey] = raw
	return next, nil
}

func (l *loop) invoke(ctx context.Context, c thread.ToolCall, state thread.State) (res capabilities.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tool %q panicked: %v", c.Name, r)
			if l.cfg.Depth == 0 {
				debug.PrintStack()
			}
		}
	}()
	if l.task != nil && c.Name == capabilities.ReservedToolName {
		return l.runSubagent(ctx, c, state)
	}
	var tool capabilities.Tool
	for _, t := range l.tools {
		if t.Spec().Name == c.Name {
			tool = t
			break
		}
	}
	if tool == nil {
		names := make([]string, 0, len(l.tools))
		for _, t := range l.tools {
			names = append(names, t.Spec().Name)
		}
		return res, fmt.Errorf("there is no tool %q on this route; available tools: %s", c.Name, strings.Join(names, ", "))
	}
	inv := capabilities.Invocation{CallID: c.ID, ThreadID: l.cfg.ThreadID, RunID: l.cfg.RunID, RouteID: l.cfg.Route.Route.ID, Params: l.cfg.Params, Input: c.Input, State: state, Steps: l.host.Steps(), Items: l.host.Items(), Outputs: l.cfg.Outputs, Tools: toolCaller{l, c.ID, state}}
	return l.callTool(ctx, tool, inv)
}

func (l *loop) truncate(s string) string {
	max := l.cfg.MaxToolOutput
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", cut, len(s))
}

// preview is the text of arguments kept as a JSON string, cut to 200 bytes
// for an error message.
func preview(input json.RawMessage) string {
	var text string
	_ = json.Unmarshal(input, &text)
	const max = 200
	if len(text) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

func rawOrNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage("null")
	}
	return raw
}
