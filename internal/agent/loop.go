package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/routeprompt"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// Defaults used when Config leaves a limit at zero.
const (
	DefaultMaxTurns      = 25
	DefaultMaxDepth      = 3
	DefaultMaxToolOutput = 64 << 10
)

// Config is everything one run of a route's agent needs.
type Config struct {
	Route  *capabilities.Prepared
	Params map[string]string
	Model  llms.Model
	// ModelName names Model in errors ("openai:gpt-4o-mini").
	ModelName string
	// MaxTurns caps model calls; zero uses the route's max_turns, then
	// AppMaxTurns, then DefaultMaxTurns.
	MaxTurns int
	// AppMaxTurns is the app's limit (dawn.yaml limits.max_turns) for routes
	// whose agent.md sets none; subagents inherit it.
	AppMaxTurns int
	// AppTemperature is the app's temperature (dawn.yaml temperature) for
	// routes whose agent.md sets none; nil sends none.
	AppTemperature *float64
	// Stream emits "chunk" events as the model streams text.
	Stream bool
	// Emit receives every event of the run in order. Required.
	Emit func(stream.Event)
	// Checkpoint, when set, is called after every completed step with the
	// messages the step added and the full state values. An error ends the
	// run: state that cannot be saved must not be built upon.
	Checkpoint func(ctx context.Context, added []thread.Message, values thread.State) error
	// DeferLastCheckpoint leaves the last step of a successful run unsaved
	// and returns it in Result.Unsaved, so the caller can save it together
	// with the end of the run in one transaction. No model call follows the
	// last step, so nothing is built on it before it is saved.
	DeferLastCheckpoint bool
	// Subagent resolves the subagent named name of route parent, for the
	// task tool. Nil disables subagents.
	Subagent func(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error)
	// Depth is 0 for a top-level run and grows by one per subagent level.
	Depth int
	// MaxDepth bounds subagent nesting; zero uses DefaultMaxDepth.
	MaxDepth int
	// MaxToolOutput bounds the bytes of a tool's output shown to the model;
	// zero uses DefaultMaxToolOutput.
	MaxToolOutput int
	// App returns the app-wide values capabilities asked to remember, for
	// their BeforeTool hooks. It is called only when such a hook runs, so a
	// route without one never reads them. Nil means none.
	App func() thread.State
	// Resolved holds, by capabilities.ResolutionKey, what each held-back
	// call does now that its interrupt is answered (see Run's resume);
	// keys with a path reach the parked subagents.
	Resolved map[string]capabilities.Resolution
	// Park lets a hook's interrupt park the run: the caller saves the run's
	// state and resumes it later. Without it (a run whose state nobody
	// saves) the call is refused instead. Subagents inherit it.
	Park bool
	// Signal, when set, is polled between steps for a supervisor signal
	// ("pause"); the route's hooks handle it and the run stops cleanly.
	Signal func() string
	// Tracer, when set, opens a span around each tool call and subagent
	// run; subagents inherit it.
	Tracer Tracer
	// Steps is lent to the route's tools as Invocation.Steps; subagents do
	// not inherit it.
	Steps capabilities.StepRunner
	// ToolTimeout bounds a tool call whose tool sets no timeout of its own
	// (capabilities.ToolSpec.Timeout); zero uses DefaultToolTimeout.
	// Subagents inherit it.
	ToolTimeout time.Duration
}

// Tracer opens spans around tool calls and subagent runs. Each method
// returns the context the call runs in and a function that ends the span
// with the call's error.
type Tracer interface {
	Tool(ctx context.Context, name, callID string) (context.Context, func(error))
	Subagent(ctx context.Context, name, routeID string, depth int) (context.Context, func(error))
}

// Result is a finished run.
type Result struct {
	// Messages is the whole conversation after the run.
	Messages []thread.Message
	Values   thread.State
	// Answer is the final assistant text.
	Answer string
	Turns  int
	// Stopped says why a hook ended the run early and cleanly (for example
	// "plan_paused"); empty when the model gave its final answer.
	Stopped string
	// AnswerMeta is the metadata the hooks stored on the final answer
	// (capabilities.Effect.AnswerMeta), such as the harness's plan snapshot.
	AnswerMeta map[string]json.RawMessage
	// Unsaved holds the messages of the last step, with Values its state,
	// when Config.DeferLastCheckpoint left that step for the caller to save.
	Unsaved []thread.Message
	// Interrupts, when set, parked the run: Values holds them under
	// capabilities.InterruptsKey and the held-back calls are the
	// unanswered ones of the last assistant message.
	Interrupts []capabilities.Interrupt
}

// TurnLimitError ends a run whose model kept calling tools for MaxTurns
// turns without answering.
type TurnLimitError struct {
	Route string
	Max   int
}

func (e *TurnLimitError) Error() string {
	return fmt.Sprintf("route %s: the model made %d turns without a final answer; if the task really needs more, raise max_turns in the route's agent.md (or limits.max_turns in dawn.yaml)", e.Route, e.Max)
}

// ModelError is a failed model call.
type ModelError struct {
	Model string
	Err   error
}

func (e *ModelError) Error() string {
	msg := e.Err.Error()
	if e.Model != "" && !strings.Contains(msg, e.Model) {
		return fmt.Sprintf("model %s: %s", e.Model, msg)
	}
	return msg
}

func (e *ModelError) Unwrap() error { return e.Err }

// Run runs the agent loop: history is the thread's conversation so far,
// values its state, and input the new messages (usually one user message).
// It returns when the model answers without calling tools, the turn limit is
// hit, the model fails, a checkpoint fails, a hook parks the run for a
// person's decision (Result.Interrupts), or ctx ends.
//
// A history that ends with an assistant message whose tool calls are not
// all answered is a parked run going on: the unanswered calls run first
// (each as Config.Resolved says), without the Start hooks.
func Run(ctx context.Context, cfg Config, history []thread.Message, values thread.State, input []thread.Message) (Result, error) {
	l := &loop{cfg: cfg}
	l.init()
	msgs := make([]thread.Message, 0, len(history)+len(input)+4)
	msgs = append(msgs, history...)
	pending := len(history) // messages from here on are not checkpointed yet
	state := values
	if state == nil {
		state = cfg.Route.InitialState()
	}
	res := Result{}
	finish := func(stopped string) (Result, error) {
		if cfg.DeferLastCheckpoint {
			res.Unsaved = msgs[pending:]
		} else if err := l.checkpoint(ctx, msgs[pending:], state); err != nil {
			return res, err
		}
		res.Messages, res.Values, res.Stopped = msgs, state, stopped
		return res, nil
	}
	var stop stopFlag
	park := func(parked []capabilities.Interrupt) (Result, error) {
		list, err := json.Marshal(parked)
		if err != nil {
			return res, err
		}
		state = state.Clone()
		state[capabilities.InterruptsKey] = list
		if cfg.Depth == 0 {
			// A subagent's interrupts surface on the root stream only,
			// once, when the root parks with them.
			for _, in := range parked {
				l.emit(stream.New(stream.TypeInterrupt, in))
			}
		}
		res.Interrupts = parked
		return finish(stop.reason)
	}
	// A parked run going on: the answers apply, the held-back calls run,
	// and the turn ends as the answers say.
	resumed := len(input) == 0 && len(cfg.Resolved) > 0
	if !resumed {
		// Calls a crash cut off are answered before the new input.
		replies, next, err := l.settleStarted(ctx, history, state, &stop)
		if err != nil {
			return res, err
		}
		msgs, state = append(msgs, replies...), next
	}
	msgs = append(msgs, input...)
	if resumed {
		calls := unanswered(history)
		after := l.afterAnswers()
		all := after
		for _, c := range calls {
			if r, ok := cfg.Resolved[c.ID]; ok {
				all = append(all, r)
			}
		}
		// Notes kept while a resume left the turn open come first.
		var notes []thread.Message
		if _, err := state.Decode(capabilities.NotesKey, &notes); err != nil {
			return res, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.NotesKey, err)
		}
		var note string
		var noteMeta map[string]json.RawMessage
		for _, r := range all {
			note, noteMeta = joinNote(note, r.Note), mergeMeta(noteMeta, r.NoteMeta)
			if r.Stop && !stop.set {
				stop = stopFlag{set: true, reason: r.StopReason}
			}
		}
		var err error
		for _, r := range after {
			if state, err = l.resolutionUpdate(state, r); err != nil {
				return res, err
			}
		}
		var parked []capabilities.Interrupt
		if len(calls) > 0 {
			if state, err = l.markStarted(ctx, calls, state); err != nil {
				return res, err
			}
			var replies []thread.Message
			replies, state, parked, err = l.runCalls(ctx, calls, make([]error, len(calls)), state, &stop)
			if err != nil {
				return res, err
			}
			state = withoutStarted(state)
			msgs = append(msgs, replies...)
		}
		// The answers were for this turn only: a later call with the same
		// id is a new call.
		l.cfg.Resolved = nil
		// The notes follow the turn's tool results; while the turn is still
		// open (a subagent parked again) the parked state keeps them.
		if note != "" {
			notes = append(notes, thread.Message{Role: thread.RoleUser, Content: note, Meta: noteMeta})
		}
		if state, err = keepNotes(state, notes, len(unanswered(msgs)) > 0); err != nil {
			return res, err
		}
		if len(unanswered(msgs)) == 0 {
			msgs = append(msgs, notes...)
		}
		if len(parked) > 0 {
			return park(parked)
		}
		if stop.set {
			return finish(stop.reason)
		}
		if err := l.checkpoint(ctx, msgs[pending:], state); err != nil {
			return res, err
		}
		pending = len(msgs)
	}
	for _, h := range l.hooks {
		if resumed {
			break // a parked run going on: it has started already
		}
		if h.Start != nil {
			var err error
			if state, err = l.effect(state, h.Start(state, input), &stop); err != nil {
				return res, err
			}
		}
	}
	if stop.set {
		return finish(stop.reason)
	}
	for turn := 1; turn <= l.maxTurns; turn++ {
		res.Turns = turn
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if sig := l.signal(); sig != "" {
			for _, h := range l.hooks {
				if h.Signal != nil {
					var err error
					if state, err = l.effect(state, h.Signal(state, sig), &stop); err != nil {
						return res, err
					}
				}
			}
			if !stop.set {
				stop = stopFlag{set: true, reason: sig}
			}
			return finish(stop.reason)
		}
		choice, call, err := l.generate(ctx, msgs, state)
		if err != nil {
			return res, err
		}
		calls, bad := toolCalls(choice)
		answer := thread.Message{Role: thread.RoleAssistant, Content: choice.Content, ToolCalls: calls}
		if len(calls) == 0 {
			var note string
			var answerMeta, noteMeta map[string]json.RawMessage
			var events []stream.Event
			reject := false
			for _, h := range l.hooks {
				if h.Final == nil {
					continue
				}
				eff := h.Final(state, choice.Content)
				if state, err = l.apply(state, eff, &stop); err != nil {
					return res, err
				}
				events = append(events, eff.Events...)
				reject = reject || eff.Reject
				note = joinNote(note, eff.Note)
				answerMeta = mergeMeta(answerMeta, eff.AnswerMeta)
				noteMeta = mergeMeta(noteMeta, eff.NoteMeta)
			}
			reject = reject && !stop.set
			if reject {
				// Right after the answer's chunks, so that clients can
				// take back exactly those.
				l.emit(stream.New(stream.TypeAnswerRejected, map[string]string{"reason": note}))
			}
			l.emit(call)
			for _, e := range events {
				l.emit(e)
			}
			if reject {
				msgs = append(msgs, answer, thread.Message{Role: thread.RoleUser, Content: note, Meta: noteMeta})
				if err := l.checkpoint(ctx, msgs[pending:], state); err != nil {
					return res, err
				}
				pending = len(msgs)
				continue
			}
			answer.Meta, res.AnswerMeta = answerMeta, answerMeta
			msgs = append(msgs, answer)
			res.Answer = choice.Content
			return finish(stop.reason)
		}
		msgs = append(msgs, answer)
		l.emit(call)
		for _, c := range calls {
			l.emit(stream.New(stream.TypeToolCall, map[string]any{"id": c.ID, "name": c.Name, "input": c.Input}))
		}
		replies, next, parked, err := l.runCalls(ctx, calls, bad, state, &stop)
		if err != nil {
			return res, err
		}
		state = next
		msgs = append(msgs, replies...)
		if len(parked) > 0 {
			return park(parked)
		}
		if stop.set {
			return finish(stop.reason)
		}
		if err := l.checkpoint(ctx, msgs[pending:], state); err != nil {
			return res, err
		}
		pending = len(msgs)
	}
	res.Messages, res.Values = msgs, state
	return res, &TurnLimitError{Route: cfg.Route.Route.ID, Max: l.maxTurns}
}

// mergeMeta adds the message metadata keys of add to m.
func mergeMeta(m, add map[string]json.RawMessage) map[string]json.RawMessage {
	for k, v := range add {
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m[k] = v
	}
	return m
}

// afterAnswers returns the resolutions of this run's own interrupts raised
// after their call ran (not a parked subagent's), in the order of their
// keys.
func (l *loop) afterAnswers() []capabilities.Resolution {
	var keys []string
	for key := range l.cfg.Resolved {
		if _, _, sub := capabilities.SplitResolutionKey(key); !sub && capabilities.IsAfterID(key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	out := make([]capabilities.Resolution, len(keys))
	for i, key := range keys {
		out[i] = l.cfg.Resolved[key]
	}
	return out
}

// resolutionUpdate applies r's update through the reducers and emits its
// events.
func (l *loop) resolutionUpdate(state thread.State, r capabilities.Resolution) (thread.State, error) {
	next, err := l.cfg.Route.Apply(state, r.Update)
	if err != nil {
		return state, fmt.Errorf("route %s: a capability answered an interrupt with an update the route cannot take: %w", l.cfg.Route.Route.ID, err)
	}
	for _, e := range r.Events {
		l.emit(e)
	}
	return next, nil
}

// unanswered returns the tool calls of history's last assistant message
// that no tool message after it answers, when only tool messages follow it.
func unanswered(history []thread.Message) []thread.ToolCall {
	answered := map[string]bool{}
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		switch {
		case m.Role == thread.RoleTool:
			answered[m.ToolCallID] = true
			continue
		case m.Role != thread.RoleAssistant || len(m.ToolCalls) == 0:
			return nil
		}
		var calls []thread.ToolCall
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				calls = append(calls, c)
			}
		}
		return calls
	}
	return nil
}

// runCalls runs one turn's tool calls in order and returns their tool
// messages and the state after them. A call a BeforeTool hook holds back
// for a person's decision gets no message: its interrupt is in parked, as
// are those AfterTool hooks raised after a call ran.
func (l *loop) runCalls(ctx context.Context, calls []thread.ToolCall, bad []error, state thread.State, stop *stopFlag) (replies []thread.Message, next thread.State, parked []capabilities.Interrupt, err error) {
	for i, c := range calls {
		var reply *thread.Message
		var ins []capabilities.Interrupt
		reply, ins, state, err = l.dispatch(ctx, c, bad[i], state, stop)
		if err != nil {
			return replies, state, parked, err
		}
		parked = append(parked, ins...)
		if reply != nil {
			replies = append(replies, *reply)
		}
	}
	return replies, state, parked, nil
}

// beforeTool asks the BeforeTool hooks about c. It returns the interrupt
// that holds c back, or the refusal the model gets in c's place.
func (l *loop) beforeTool(c thread.ToolCall, state thread.State, stop *stopFlag) (in *capabilities.Interrupt, refusal *string, next thread.State, err error) {
	for _, h := range l.hooks {
		if h.BeforeTool == nil {
			continue
		}
		var app thread.State
		if l.cfg.App != nil {
			app = l.cfg.App()
		}
		eff := h.BeforeTool(state, c, app)
		if state, err = l.effect(state, eff, stop); err != nil {
			return nil, nil, state, err
		}
		switch {
		case eff.Interrupt != nil && !l.cfg.Park:
			// Nobody saves this run's state, so it cannot park: the call
			// is refused and the model adapts.
			text := fmt.Sprintf("tool %q needs a person's approval, which cannot be asked for here; do the task without it or say that it needs approval", c.Name)
			return nil, &text, state, nil
		case eff.Interrupt != nil:
			in := *eff.Interrupt
			in.Type, in.CallID = capabilities.InterruptType, c.ID
			if len(in.Detail) == 0 {
				in.Detail = json.RawMessage("{}")
			}
			return &in, nil, state, nil
		case eff.Refuse:
			text := eff.Refusal
			return nil, &text, state, nil
		}
	}
	return nil, nil, state, nil
}

// stopFlag records the first hook that asked the run to stop.
type stopFlag struct {
	set    bool
	reason string
}

// effect applies a hook's effect: its update through the reducers, its
// events, and its stop request.
func (l *loop) effect(state thread.State, eff capabilities.Effect, stop *stopFlag) (thread.State, error) {
	next, err := l.apply(state, eff, stop)
	if err != nil {
		return state, err
	}
	for _, e := range eff.Events {
		l.emit(e)
	}
	return next, nil
}

// apply is effect without the events, for a caller that emits them itself.
func (l *loop) apply(state thread.State, eff capabilities.Effect, stop *stopFlag) (thread.State, error) {
	next, err := l.cfg.Route.Apply(state, eff.Update)
	if err != nil {
		return state, fmt.Errorf("route %s: a capability hook made an update the route cannot take: %w", l.cfg.Route.Route.ID, err)
	}
	if eff.Stop && !stop.set {
		*stop = stopFlag{set: true, reason: eff.StopReason}
	}
	return next, nil
}

func (l *loop) signal() string {
	if l.cfg.Signal == nil {
		return ""
	}
	return l.cfg.Signal()
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

type loop struct {
	cfg      Config
	maxTurns int
	tools    []capabilities.Tool
	defs     []llms.Tool
	task     *taskTool
	hooks    []*capabilities.Hooks
}

func (l *loop) init() {
	r := l.cfg.Route
	l.maxTurns = l.cfg.MaxTurns
	if l.maxTurns <= 0 {
		l.maxTurns = r.Route.Agent.MaxTurns
	}
	if l.maxTurns <= 0 {
		l.maxTurns = l.cfg.AppMaxTurns
	}
	if l.maxTurns <= 0 {
		l.maxTurns = DefaultMaxTurns
	}
	if l.cfg.MaxDepth <= 0 {
		l.cfg.MaxDepth = DefaultMaxDepth
	}
	if l.cfg.MaxToolOutput <= 0 {
		l.cfg.MaxToolOutput = DefaultMaxToolOutput
	}
	l.tools = r.Tools
	l.hooks = r.Hooks
	if l.cfg.Subagent != nil && len(r.Route.Subagents) > 0 {
		l.task = newTaskTool(r.Route.Subagents)
		l.tools = append(l.tools[:len(l.tools):len(l.tools)], l.task)
	}
	l.defs = toolDefs(l.tools)
}

func (l *loop) emit(e stream.Event) { l.cfg.Emit(e) }

func (l *loop) checkpoint(ctx context.Context, added []thread.Message, state thread.State) error {
	if l.cfg.Checkpoint == nil {
		return nil
	}
	return l.cfg.Checkpoint(ctx, added, state)
}

// SystemPrompt is the route's prompt, rendered as a template with params
// and state when it uses template syntax, followed by every capability
// fragment rendered from state.
func SystemPrompt(p *capabilities.Prepared, params map[string]string, state thread.State) (string, error) {
	prompt, err := routeprompt.Prompt(p.Route, params, state)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(prompt)
	for _, render := range p.Prompts {
		if frag := render(state); frag != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(frag)
		}
	}
	return b.String(), nil
}

// SamplingOptions are the call options every model call of the run
// carries: the temperature of agent.md, else of dawn.yaml. Only a
// temperature someone chose is sent; unset, the provider's default applies
// (see models).
func (c Config) SamplingOptions() []llms.CallOption {
	t := c.Route.Route.Agent.Temperature
	if t == nil {
		t = c.AppTemperature
	}
	if t == nil {
		return nil
	}
	return []llms.CallOption{llms.WithTemperature(*t)}
}

// generate calls the model. It returns the model's answer and the
// model_call event that reports the call, for the caller to emit after the
// answer's chunks and the gate's verdict on them (a client takes back the
// chunks right before an answer_rejected).
func (l *loop) generate(ctx context.Context, msgs []thread.Message, state thread.State) (*llms.ContentChoice, stream.Event, error) {
	opts := l.cfg.SamplingOptions()
	if len(l.defs) > 0 {
		opts = append(opts, llms.WithTools(l.defs))
	}
	if l.cfg.Stream {
		opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) == 0 {
				return nil
			}
			l.emit(stream.Chunk(string(chunk)))
			return nil
		}))
	}
	// A retried or fallen-back model call shows each failed try.
	ctx = models.WithAttemptObserver(ctx, func(a models.Attempt) {
		l.emit(stream.New(stream.TypeModelRetry, a.EventData()))
	})
	system, err := SystemPrompt(l.cfg.Route, l.cfg.Params, state)
	if err != nil {
		return nil, stream.Event{}, err
	}
	start := time.Now()
	resp, err := l.cfg.Model.GenerateContent(ctx, toLLM(system, msgs), opts...)
	elapsed := time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stream.Event{}, ctx.Err()
		}
		return nil, stream.Event{}, &ModelError{Model: l.cfg.ModelName, Err: err}
	}
	// A client may end a stream cut off by ctx with the partial text and
	// no error (langchaingo's OpenAI client does): that is no answer.
	if err := ctx.Err(); err != nil {
		return nil, stream.Event{}, err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, stream.Event{}, &ModelError{Model: l.cfg.ModelName, Err: errors.New("the model returned no choices")}
	}
	return resp.Choices[0], stream.New(stream.TypeModelCall, modelCall(l.cfg.ModelName, elapsed, resp)), nil
}

// modelCallData is the data of a model_call event.
type modelCallData struct {
	Model        string `json:"model"`
	DurationMS   int64  `json:"duration_ms"`
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// modelCall describes a model call that answered resp after elapsed; token
// counts the provider did not report are left out.
func modelCall(model string, elapsed time.Duration, resp *llms.ContentResponse) modelCallData {
	d := modelCallData{Model: model, DurationMS: elapsed.Milliseconds()}
	in, out, reasons := models.Usage(resp)
	if in >= 0 {
		d.InputTokens = &in
	}
	if out >= 0 {
		d.OutputTokens = &out
	}
	if len(reasons) > 0 {
		d.FinishReason = reasons[0]
	}
	return d
}

// toolCalls returns the tool calls of the model's answer. Each call's Input
// is valid JSON: arguments that are not (a cut-off object, an empty string)
// are kept as the JSON string of their text, so the call can be streamed,
// saved and read back as it was made. bad holds, per call, why its
// arguments are not JSON, or nil.
func toolCalls(c *llms.ContentChoice) (calls []thread.ToolCall, bad []error) {
	add := func(id, name, args string) {
		input, err := toolInput(args)
		calls = append(calls, thread.ToolCall{ID: id, Name: name, Input: input})
		bad = append(bad, err)
	}
	for i, tc := range c.ToolCalls {
		if tc.FunctionCall == nil {
			continue
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		add(id, tc.FunctionCall.Name, tc.FunctionCall.Arguments)
	}
	if len(calls) == 0 && c.FuncCall != nil {
		add("call_0", c.FuncCall.Name, c.FuncCall.Arguments)
	}
	return calls, bad
}

// toolInput is a tool call's arguments as JSON: the arguments themselves
// when they are JSON, else the JSON string of their text and the reason
// they are not JSON.
func toolInput(args string) (json.RawMessage, error) {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args), nil
	}
	text, _ := json.Marshal(args) // a string always encodes
	if strings.TrimSpace(args) == "" {
		return text, errors.New("arguments are empty")
	}
	var v any
	return text, json.Unmarshal([]byte(args), &v) // says why
}

// dispatch runs one tool call and returns the tool message for the model and
// the state after the call. A failing tool never ends the run: its error
// becomes the tool message. Only a hook's impossible update is an error.
//
// badArgs says why the call's arguments are not JSON; such a call fails
// with an input error without running the tool.
//
// A call a BeforeTool hook holds back returns its interrupt and no message;
// a task call whose subagent parked returns the subagent's interrupts. A
// call an AfterTool hook raised an interrupt after returns its message and
// that interrupt.
func (l *loop) dispatch(ctx context.Context, c thread.ToolCall, badArgs error, state thread.State, stop *stopFlag) (*thread.Message, []capabilities.Interrupt, thread.State, error) {
	var refusal *string
	if r, ok := l.cfg.Resolved[c.ID]; ok {
		var err error
		if state, err = l.resolutionUpdate(state, r); err != nil {
			return nil, nil, state, err
		}
		switch {
		case !r.Run:
			refusal = &r.Refusal
		case len(r.Input) > 0:
			c.Input = r.Input
		}
	} else if badArgs == nil {
		var in *capabilities.Interrupt
		var err error
		if in, refusal, state, err = l.beforeTool(c, state, stop); err != nil {
			return nil, nil, state, err
		}
		if in != nil {
			return nil, []capabilities.Interrupt{*in}, state, nil
		}
	}
	ev := capabilities.ToolEvent{CallID: c.ID, Name: c.Name, Input: c.Input}
	var res capabilities.Result
	var err error
	if l.cfg.Tracer != nil {
		var end func(error)
		ctx, end = l.cfg.Tracer.Tool(ctx, c.Name, c.ID)
		defer func() { end(ev.Err) }()
	}
	if refusal != nil {
		res.Output, _ = json.Marshal(*refusal) // a string always encodes
	} else if badArgs != nil {
		msg := fmt.Sprintf("arguments are not valid JSON (%v); send one JSON object that matches the tool's input schema", badArgs)
		if text := preview(c.Input); strings.TrimSpace(text) != "" {
			msg += ". The arguments were: " + text
		}
		err = &capabilities.InputError{Tool: c.Name, Msg: msg}
	} else {
		res, err = l.invoke(ctx, c, state)
		var parked *parkedSubagent
		if errors.As(err, &parked) {
			next, ferr := withFrame(state, c.ID, &parked.frame)
			if ferr != nil {
				return nil, nil, state, ferr
			}
			ins := make([]capabilities.Interrupt, len(parked.interrupts))
			for i, in := range parked.interrupts {
				in.Path = append([]string{c.ID}, in.Path...)
				ins[i] = in
			}
			return nil, ins, next, nil
		}
		if l.task != nil && c.Name == capabilities.ReservedToolName {
			// The subagent finished: it is parked no more.
			if cleared, ferr := withFrame(state, c.ID, nil); ferr == nil {
				state = cleared
			}
		}
	}
	next := state
	if err == nil && len(res.Update) > 0 {
		next, err = l.cfg.Route.Apply(state, res.Update)
		if err != nil {
			err = fmt.Errorf("tool %q returned a state update the route cannot take: %w", c.Name, err)
			next = state
		} else {
			ev.Update = res.Update
		}
	}
	ev.Err = err
	ev.Output = res.Output
	var note string
	var effects []capabilities.Effect
	for _, h := range l.hooks {
		if h.AfterTool != nil {
			eff := h.AfterTool(state, next, ev)
			note = joinNote(note, eff.Note)
			effects = append(effects, eff)
		}
	}
	reply := thread.Message{Role: thread.RoleTool, ToolCallID: c.ID, Name: c.Name}
	if err != nil {
		reply.IsError = true
		reply.Content = joinNote("error: "+err.Error(), note)
		l.emit(stream.New(stream.TypeToolResult, map[string]any{"id": c.ID, "name": c.Name, "output": nil, "error": err.Error()}))
	} else {
		reply.Content = l.truncate(modelText(res.Output))
		l.emit(stream.New(stream.TypeToolResult, map[string]any{"id": c.ID, "name": c.Name, "output": rawOrNull(res.Output)}))
	}
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
			in := *eff.Interrupt
			in.Type, in.CallID, in.After = capabilities.InterruptType, c.ID, true
			if len(in.Detail) == 0 {
				in.Detail = json.RawMessage("{}")
			}
			ins = append(ins, in)
			eff.Stop, eff.StopReason = false, ""
		}
		var herr error
		if next, herr = l.effect(next, eff, stop); herr != nil {
			return &reply, nil, state, herr
		}
	}
	return &reply, ins, next, nil
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
	inv := capabilities.Invocation{CallID: c.ID, RouteID: l.cfg.Route.Route.ID, Params: l.cfg.Params, Input: c.Input, State: state, Steps: l.cfg.Steps}
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
