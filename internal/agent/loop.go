package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
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
	// Host is where the run's events go, its steps are saved and its
	// subagents come from. Required.
	Host Host
	// DeferLastCheckpoint leaves the last step of a successful run unsaved
	// and returns it in Result.Unsaved, so the caller can save it together
	// with the end of the run in one transaction. No model call follows the
	// last step, so nothing is built on it before it is saved.
	DeferLastCheckpoint bool
	// Depth is 0 for a top-level run and grows by one per subagent level.
	Depth int
	// MaxDepth bounds subagent nesting; zero uses DefaultMaxDepth.
	MaxDepth int
	// MaxToolOutput bounds the bytes of a tool's output shown to the model;
	// zero uses DefaultMaxToolOutput.
	MaxToolOutput int
	// Resolved holds, by capabilities.ResolutionKey, what each held-back
	// call does now that its interrupt is answered (see Run's resume);
	// keys with a path reach the parked subagents.
	Resolved map[string]capabilities.Resolution
	// Park lets a hook's interrupt park the run: the caller saves the run's
	// state and resumes it later. Without it (a run whose state nobody
	// saves) the call is refused instead. Subagents inherit it.
	Park bool
	// Tracer, when set, opens a span around each tool call and subagent
	// run; subagents inherit it.
	Tracer Tracer
	// RecordStarted saves each model turn before its tool calls run, with
	// the calls listed as started (capabilities.StartedKey), so that a run
	// continued after a crash answers those whose result was not saved
	// instead of running them blindly again: one more commit per tool turn.
	RecordStarted bool
	// Continue says the run goes on from the last step that a run cut off
	// by a crash saved: the Start hooks, which saw the run's input then,
	// do not run again, and the calls that had started are answered first.
	Continue bool
	// ToolTimeout bounds a tool call whose tool sets no timeout of its own
	// (capabilities.ToolSpec.Timeout); zero uses DefaultToolTimeout.
	// Subagents inherit it.
	ToolTimeout time.Duration
	// Models resolves a model name other than ModelName, for a hook that
	// asks another model (a summary model); nil reaches none. Subagents
	// inherit it.
	Models func(spec string) (llms.Model, error)
	// Outputs keeps large tool outputs with the run's thread, lent to
	// hooks and tools as capabilities.Invocation.Outputs; nil where the
	// run has no store. Subagents inherit it.
	Outputs capabilities.ToolOutputStore
	// ThreadID is the run's thread, lent to tools as
	// capabilities.Invocation.ThreadID; "" where the run has no thread.
	// Subagents inherit it.
	ThreadID string
	// RunID is the run, lent to tools as capabilities.Invocation.RunID;
	// "" where there is none. Subagents inherit it.
	RunID string
}

// Host is what the caller lends one run of the loop: where its events go
// and its steps are saved, its supervisor's signals, its subagents, the
// app's remembered values and the steps its tools may run. Runs delegated
// from a run (Delegate) may share its host at once, as a run strategy's
// parallel steps do, so its methods must be safe for concurrent use.
type Host interface {
	// Emit receives every event of the run, in order.
	Emit(stream.Event)
	// Checkpoint saves a completed step: the messages the step added and
	// the full state values. An error ends the run: state that cannot be
	// saved must not be built upon. A host that keeps nothing returns nil.
	Checkpoint(ctx context.Context, added []thread.Message, values thread.State) error
	// Signal returns a supervisor signal ("pause") and takes it, or "". It
	// is polled between steps; the route's hooks handle the signal and the
	// run stops cleanly.
	Signal() string
	// Subagent resolves the subagent named name of route parent, for the
	// task tool: its prepared route, its model and the model's name. An
	// error fails the task call, and the model is told why.
	Subagent(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error)
	// App returns the app-wide values capabilities asked to remember, for
	// their BeforeTool hooks. It is called only when such a hook runs, so
	// a route without one never reads them. Nil means none.
	App() thread.State
	// Steps is lent to the route's tools as Invocation.Steps, or nil.
	Steps() capabilities.StepRunner
	// Items is lent to every tool as Invocation.Items, or nil.
	Items() capabilities.ItemStore
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
//
// The run goes through named phases: resume (a parked run going on) or
// start (the Start hooks), then one turn per model call, each ending in
// final when the model answers without tools, and finish.
func Run(ctx context.Context, cfg Config, history []thread.Message, values thread.State, input []thread.Message) (Result, error) {
	return RunWith(ctx, &cfg, history, values, input)
}

// RunWith is Run with the configuration passed by pointer; it keeps no
// reference to cfg. A server holds thousands of runs waiting on their
// model, each deep below this call on its own goroutine: a goroutine's
// stack shrinks back only when the frames it waits under are small, and a
// Config copied into a caller's frame is not.
func RunWith(ctx context.Context, cfg *Config, history []thread.Message, values thread.State, input []thread.Message) (Result, error) {
	l := newLoop(cfg, history, values, input)
	var end bool
	var err error
	if len(input) == 0 && len(l.cfg.Resolved) > 0 {
		end, err = l.resume(ctx)
	} else {
		end, err = l.start(ctx, input)
	}
	for turn := 1; !end && err == nil; turn++ {
		if turn > l.maxTurns {
			l.res.Messages, l.res.Values = l.msgs, l.state
			return l.res, &TurnLimitError{Route: l.cfg.Route.Route.ID, Max: l.maxTurns}
		}
		end, err = l.turn(ctx, turn)
	}
	if err != nil {
		return l.res, err
	}
	return l.finish(ctx)
}

// loop is one run of the agent loop: its configuration, what it offers the
// model, and the run's state as the phases move it on.
type loop struct {
	cfg      Config
	host     Host
	maxTurns int
	tools    []capabilities.Tool
	defs     []llms.Tool
	// toolSize is what defs add to a request, worked out once.
	toolSize toolSizes
	task     *taskTool
	hooks    []*capabilities.Hooks

	// msgs is the whole conversation; those from pending on are not
	// checkpointed yet.
	msgs    []thread.Message
	pending int
	state   thread.State
	// stop is the first hook's request to end the run.
	stop stopFlag
	// parked holds the interrupts the run parks with at the end of its
	// step.
	parked []capabilities.Interrupt
	res    Result
}

func newLoop(cfg *Config, history []thread.Message, values thread.State, input []thread.Message) *loop {
	l := &loop{cfg: *cfg, host: cfg.Host}
	r := cfg.Route
	l.maxTurns = cmp.Or(max(cfg.MaxTurns, 0), max(r.Route.Agent.MaxTurns, 0), max(cfg.AppMaxTurns, 0), DefaultMaxTurns)
	if l.cfg.MaxDepth <= 0 {
		l.cfg.MaxDepth = DefaultMaxDepth
	}
	if l.cfg.MaxToolOutput <= 0 {
		l.cfg.MaxToolOutput = DefaultMaxToolOutput
	}
	l.tools = r.Tools
	l.hooks = r.Hooks
	if targets := TaskTargets(r); len(targets) > 0 {
		l.task = newTaskTool(targets)
		l.tools = append(l.tools[:len(l.tools):len(l.tools)], l.task)
	}
	l.defs = toolDefs(l.tools)
	l.msgs = make([]thread.Message, 0, len(history)+len(input)+4)
	l.msgs = append(l.msgs, history...) // start adds the input
	l.pending = len(history)
	l.state = values
	if l.state == nil {
		l.state = r.InitialState()
	}
	return l
}

// resume is the first phase of a parked run going on: the answers apply,
// the held-back calls run, and the turn ends as the answers say.
func (l *loop) resume(ctx context.Context) (end bool, err error) {
	calls := unanswered(l.msgs)
	after := l.afterAnswers()
	// Notes kept while a resume left the turn open come first.
	var notes []thread.Message
	if _, err := l.state.Decode(capabilities.NotesKey, &notes); err != nil {
		return false, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.NotesKey, err)
	}
	note, noteMeta := l.answerNotes(after, calls)
	for _, r := range after {
		if l.state, err = l.resolutionUpdate(l.state, r); err != nil {
			return false, err
		}
	}
	if len(calls) > 0 {
		if err := l.markStarted(ctx, calls); err != nil {
			return false, err
		}
		if err := l.runCalls(ctx, calls, make([]error, len(calls))); err != nil {
			return false, err
		}
		l.state = withoutStarted(l.state)
	}
	// The answers were for this turn only: a later call with the same id
	// is a new call.
	l.cfg.Resolved = nil
	// The notes follow the turn's tool results; while the turn is still
	// open (a subagent parked again) the parked state keeps them.
	if note != "" {
		notes = append(notes, thread.Message{Role: thread.RoleUser, Content: note, Meta: noteMeta})
	}
	open := len(unanswered(l.msgs)) > 0
	if l.state, err = keepNotes(l.state, notes, open); err != nil {
		return false, err
	}
	if !open {
		l.msgs = append(l.msgs, notes...)
	}
	return l.endStep(ctx)
}

// answerNotes joins the notes of the answers to this run's interrupts
// (after, then those of the held-back calls), and takes the first stop
// they ask for.
func (l *loop) answerNotes(after []capabilities.Resolution, calls []thread.ToolCall) (string, map[string]json.RawMessage) {
	all := after
	for _, c := range calls {
		if r, ok := l.cfg.Resolved[c.ID]; ok {
			all = append(all, r)
		}
	}
	var note string
	var meta map[string]json.RawMessage
	for _, r := range all {
		note, meta = joinNote(note, r.Note), mergeMeta(meta, r.NoteMeta)
		if r.Stop && !l.stop.set {
			l.stop = stopFlag{set: true, reason: r.StopReason}
		}
	}
	return note, meta
}

// start is the first phase of a new run: calls of the last turn that a
// crash cut off are answered (settleStarted), the input joins the
// conversation, the Start hooks see it, and one may end the run at once.
func (l *loop) start(ctx context.Context, input []thread.Message) (end bool, err error) {
	if err := l.settleStarted(ctx); err != nil {
		return false, err
	}
	l.msgs = append(l.msgs, input...)
	if l.cfg.Continue {
		return false, nil
	}
	for _, h := range l.hooks {
		if h.Start == nil {
			continue
		}
		if l.state, err = l.effect(l.state, h.Start(l.state, input)); err != nil {
			return false, err
		}
	}
	return l.stop.set, nil
}

// turn is model turn n: it acts on a supervisor signal, or calls the model
// and runs the tool calls of its answer, or hands an answer without calls
// to final.
func (l *loop) turn(ctx context.Context, n int) (end bool, err error) {
	l.res.Turns = n
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if sig := l.host.Signal(); sig != "" {
		return true, l.signal(sig)
	}
	msgs, err := l.modelView(ctx)
	if err != nil {
		return false, err
	}
	choice, call, err := l.generate(ctx, msgs, l.state)
	if err != nil {
		return false, err
	}
	return l.answered(ctx, choice, call)
}

// answered ends a turn on the model's answer, reported by call: it runs
// the answer's tool calls, or hands an answer without calls to final. It
// is apart from turn, which waits on the model, for the stack (see
// RunWith).
func (l *loop) answered(ctx context.Context, choice *llms.ContentChoice, call stream.Event) (end bool, err error) {
	calls, bad := toolCalls(choice)
	if len(calls) == 0 {
		return l.final(ctx, choice.Content, call)
	}
	l.msgs = append(l.msgs, thread.Message{Role: thread.RoleAssistant, Content: choice.Content, ToolCalls: calls})
	l.emit(call)
	for _, c := range calls {
		l.emit(stream.New(stream.TypeToolCall, toolCallData{ID: c.ID, Input: c.Input, Name: c.Name}))
	}
	if err := l.recordTurn(ctx, calls); err != nil {
		return false, err
	}
	if err := l.runCalls(ctx, calls, bad); err != nil {
		return false, err
	}
	l.state = withoutStarted(l.state)
	return l.endStep(ctx)
}

// signal hands a supervisor signal to the Signal hooks and stops the run,
// for the reason a hook gives or else the signal.
func (l *loop) signal(sig string) (err error) {
	for _, h := range l.hooks {
		if h.Signal == nil {
			continue
		}
		if l.state, err = l.effect(l.state, h.Signal(l.state, sig)); err != nil {
			return err
		}
	}
	if !l.stop.set {
		l.stop = stopFlag{set: true, reason: sig}
	}
	return nil
}

// final is the Final hooks' verdict on an answer without tool calls,
// content, whose model call call reports. Accepted, the answer ends the
// run; rejected, it goes back to the model with the hooks' note and the
// run goes on.
func (l *loop) final(ctx context.Context, content string, call stream.Event) (end bool, err error) {
	v, err := l.verdict(content)
	if err != nil {
		return false, err
	}
	if v.reject {
		// Right after the answer's chunks, so that clients can take back
		// exactly those.
		l.emit(stream.New(stream.TypeAnswerRejected, map[string]string{"reason": v.note}))
	}
	l.emit(call)
	for _, e := range v.events {
		l.emit(e)
	}
	answer := thread.Message{Role: thread.RoleAssistant, Content: content}
	if v.reject {
		l.msgs = append(l.msgs, answer, thread.Message{Role: thread.RoleUser, Content: v.note, Meta: v.noteMeta})
		return false, l.save(ctx)
	}
	answer.Meta, l.res.AnswerMeta = v.answerMeta, v.answerMeta
	l.msgs = append(l.msgs, answer)
	l.res.Answer = content
	return true, nil
}

// verdict is what the Final hooks make of an answer.
type verdict struct {
	reject               bool
	note                 string
	answerMeta, noteMeta map[string]json.RawMessage
	events               []stream.Event
}

// verdict asks the Final hooks about the answer content and applies their
// updates; their events are the caller's to emit. An answer a hook rejects
// is accepted anyway when a hook stops the run.
func (l *loop) verdict(content string) (v verdict, err error) {
	for _, h := range l.hooks {
		if h.Final == nil {
			continue
		}
		eff := h.Final(l.state, content)
		if l.state, err = l.apply(l.state, eff); err != nil {
			return v, err
		}
		v.events = append(v.events, eff.Events...)
		v.reject = v.reject || eff.Reject
		v.note = joinNote(v.note, eff.Note)
		v.answerMeta = mergeMeta(v.answerMeta, eff.AnswerMeta)
		v.noteMeta = mergeMeta(v.noteMeta, eff.NoteMeta)
	}
	v.reject = v.reject && !l.stop.set
	return v, nil
}

// endStep ends a step whose tool calls have run: the run ends when a call
// parked it or a hook stopped it, and otherwise the step is saved and the
// run goes on.
func (l *loop) endStep(ctx context.Context) (end bool, err error) {
	if len(l.parked) > 0 || l.stop.set {
		return true, nil
	}
	return false, l.save(ctx)
}

// save checkpoints the messages not saved yet, with the state.
func (l *loop) save(ctx context.Context) error {
	if err := l.host.Checkpoint(ctx, l.msgs[l.pending:], l.state); err != nil {
		return err
	}
	l.pending = len(l.msgs)
	return nil
}

// finish is the last phase: a parked run keeps its interrupts in its state
// and emits them, and the last step is saved, or left to the caller
// (Config.DeferLastCheckpoint).
func (l *loop) finish(ctx context.Context) (Result, error) {
	if len(l.parked) > 0 {
		if err := l.park(); err != nil {
			return l.res, err
		}
	}
	if l.cfg.DeferLastCheckpoint {
		l.res.Unsaved = l.msgs[l.pending:]
	} else if err := l.host.Checkpoint(ctx, l.msgs[l.pending:], l.state); err != nil {
		return l.res, err
	}
	l.res.Messages, l.res.Values, l.res.Stopped = l.msgs, l.state, l.stop.reason
	return l.res, nil
}

// park keeps the interrupts the run parks with in its state, under
// capabilities.InterruptsKey.
func (l *loop) park() error {
	list, err := json.Marshal(l.parked)
	if err != nil {
		return err
	}
	l.state = l.state.Clone()
	l.state[capabilities.InterruptsKey] = list
	if l.cfg.Depth == 0 {
		// A subagent's interrupts surface on the root stream only, once,
		// when the root parks with them.
		for _, in := range l.parked {
			l.emit(stream.New(stream.TypeInterrupt, in))
		}
	}
	l.res.Interrupts = l.parked
	return nil
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

// stopFlag records the first hook that asked the run to stop.
type stopFlag struct {
	set    bool
	reason string
}

// effect applies a hook's effect: its update through the reducers, its
// events, and its stop request (the first one stops the run).
func (l *loop) effect(state thread.State, eff capabilities.Effect) (thread.State, error) {
	next, err := l.apply(state, eff)
	if err != nil {
		return state, err
	}
	for _, e := range eff.Events {
		l.emit(e)
	}
	return next, nil
}

// apply is effect without the events, for a caller that emits them itself.
func (l *loop) apply(state thread.State, eff capabilities.Effect) (thread.State, error) {
	next, err := l.cfg.Route.Apply(state, eff.Update)
	if err != nil {
		return state, fmt.Errorf("route %s: a capability hook made an update the route cannot take: %w", l.cfg.Route.Route.ID, err)
	}
	if eff.Stop && !l.stop.set {
		l.stop = stopFlag{set: true, reason: eff.StopReason}
	}
	return next, nil
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

func (l *loop) emit(e stream.Event) { l.host.Emit(e) }
