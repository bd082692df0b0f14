package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/tmc/langchaingo/llms"
)

// ErrBusy is returned by Start when the thread already has a run in flight.
var ErrBusy = errors.New("thread already has a run in flight; wait for it to finish or cancel it")

// ErrOverloaded is returned by Start when Options.MaxRuns runs are in
// flight already.
var ErrOverloaded = errors.New("the server has as many runs in flight as it may hold (dawn start --max-runs); try again shortly")

// DefaultMaxRuns is dawn start's cap on runs in flight: below its default
// connection cap (4096), so that runs beyond it are refused while there
// are connections left to refuse them on.
const DefaultMaxRuns = 4000

// ErrShuttingDown is returned by Start once Shutdown has begun.
var ErrShuttingDown = errors.New("server is shutting down")

// InputError is a run request that cannot start because of its input.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// ModelFactory builds the model named by a spec such as "openai:gpt-4o-mini".
type ModelFactory func(spec string) (llms.Model, error)

// Manager starts runs and keeps track of those in flight.
type Manager struct {
	store  store.Store
	app    atomic.Pointer[app.App]
	env    func(string) string
	logger *slog.Logger

	newModel ModelFactory
	tel      *telemetry.Telemetry
	modelsMu sync.Mutex
	models   map[string]llms.Model

	mu       sync.Mutex
	active   map[string]*Run
	maxRuns  int // 0: no cap
	closing  bool
	inflight sync.WaitGroup

	// unrecorded holds, by thread, the end of a run the store could not
	// record (see finishStore).
	unrecMu    sync.Mutex
	unrecorded map[string]runEnd
	retrying   bool // a retryUnrecorded loop is running
	quit       chan struct{}
	quitOnce   sync.Once
	// stopRemote ends listenSignals; nil unless the store is shared.
	stopRemote  chan struct{}
	unsubscribe func()
}

// Options configure a Manager.
type Options struct {
	// Env reads environment variables (default os.Getenv).
	Env func(string) string
	// Models builds models (default models.New with Env).
	Models ModelFactory
	Logger *slog.Logger
	// Telemetry records runs as OpenTelemetry spans and metrics; nil
	// records nothing.
	Telemetry *telemetry.Telemetry
	// MaxRuns caps the runs in flight at once; Start refuses more with
	// ErrOverloaded. 0 means no cap.
	MaxRuns int
}

// New returns a Manager running routes of a on st.
func New(st store.Store, a *app.App, opts Options) *Manager {
	m := &Manager{
		store: st, env: opts.Env, logger: opts.Logger, newModel: opts.Models, tel: opts.Telemetry, maxRuns: max(opts.MaxRuns, 0),
		models: map[string]llms.Model{}, active: map[string]*Run{},
		unrecorded: map[string]runEnd{}, quit: make(chan struct{}),
	}
	if m.env == nil {
		m.env = osGetenv
	}
	if m.logger == nil {
		m.logger = slog.Default()
	}
	if m.newModel == nil {
		m.newModel = func(spec string) (llms.Model, error) { return models.New(spec, m.env) }
	}
	m.app.Store(a)
	if n := m.notifier(); n != nil {
		m.stopRemote = make(chan struct{})
		m.listenSignals(n)
	}
	return m
}

// App returns the app snapshot new runs use.
func (m *Manager) App() *app.App { return m.app.Load() }

// SetApp swaps the app snapshot. Runs in flight finish on the snapshot they
// started with; the next run uses a.
func (m *Manager) SetApp(a *app.App) { m.app.Store(a) }

// Telemetry returns the run telemetry, nil when off.
func (m *Manager) Telemetry() *telemetry.Telemetry { return m.tel }

// Store returns the thread store.
func (m *Manager) Store() store.Store { return m.store }

// Model returns the (cached) model for spec.
func (m *Manager) Model(spec string) (llms.Model, error) {
	m.modelsMu.Lock()
	defer m.modelsMu.Unlock()
	if mdl, ok := m.models[spec]; ok {
		return mdl, nil
	}
	mdl, err := m.newModel(spec)
	if err != nil {
		return nil, err
	}
	mdl = m.tel.WrapModel(mdl, spec)
	m.models[spec] = mdl
	return mdl, nil
}

// Request asks for a run.
type Request struct {
	ThreadID string
	// Route is a route id or a concrete path, optionally with Dawn's
	// "#agent" suffix.
	Route string
	// Messages are the new input messages.
	Messages []thread.Message
	// Values set state fields declared in state.yaml.
	Values map[string]json.RawMessage
	// Stream asks the model to stream text as "chunk" events.
	Stream bool
	// Options steer the app's run strategies (capabilities.RunStrategy),
	// keyed by each strategy's RunOption: {"plan_first": "preview"} plans
	// without executing.
	Options map[string]string
}

// Active returns the run in flight on a thread, or nil.
func (m *Manager) Active(threadID string) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active[threadID]
}

// Cancel stops the run in flight on threadID and returns it, or nil when
// there is none. ok is false when the run's outcome was already decided, so
// the cancel did not reach it; after Done, Run.Cancelled tells for sure.
func (m *Manager) Cancel(threadID string) (run *Run, ok bool) {
	r := m.Active(threadID)
	if r == nil {
		return nil, false
	}
	return r, r.requestCancel("")
}

// Start validates req, reserves the thread and starts the run on its own
// goroutine. The run does not depend on ctx: a client that goes away does
// not stop it.
func (m *Manager) Start(ctx context.Context, req Request) (*Run, error) {
	return m.start(ctx, req, nil)
}

// start is Start, or Resume when answers is not nil.
func (m *Manager) start(ctx context.Context, req Request, answers []capabilities.Answer) (*Run, error) {
	a := m.App()
	prepared, params, err := a.Resolve(req.Route)
	if err != nil {
		return nil, err
	}
	var strat *strategy
	if answers == nil { // a resume goes on as the parked run went
		if err := m.checkInput(a, req); err != nil {
			return nil, err
		}
		if strat, err = chooseStrategy(a, prepared, req); err != nil {
			return nil, err
		}
	}
	spec := a.ModelFor(prepared.Route, m.env)
	model, err := m.Model(spec)
	if err != nil {
		return nil, err
	}

	// The run can be cancelled from the moment it is registered: its
	// context comes first.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &Run{ID: uuid.NewString(), ThreadID: req.ThreadID, RouteID: prepared.Route.ID, Model: spec, Log: stream.NewLog(), done: make(chan struct{}), cancel: cancel}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		cancel()
		return nil, ErrShuttingDown
	}
	if m.active[req.ThreadID] != nil {
		m.mu.Unlock()
		cancel()
		return nil, ErrBusy
	}
	if m.maxRuns > 0 && len(m.active) >= m.maxRuns {
		m.mu.Unlock()
		cancel()
		return nil, ErrOverloaded
	}
	m.active[req.ThreadID] = run
	m.inflight.Add(1)
	m.mu.Unlock()
	release := func() {
		m.free(run)
		m.inflight.Done()
	}
	// abort ends a run that never got going: whoever cancelled it in the
	// meantime is waiting for Done.
	abort := func(err error) (*Run, error) {
		run.end()
		cancel()
		run.err = err
		run.output = mustJSON(map[string]string{"error": err.Error()})
		release()
		run.Log.Close()
		close(run.done)
		return nil, err
	}

	// A run whose end the store could not record still holds the thread
	// there: record it first.
	if err := m.settle(req.ThreadID); err != nil {
		return abort(err)
	}
	// A parked thread goes on only through a resume, which must answer its
	// interrupts. Both are checked on the checkpoint the run starts from,
	// in the transaction that starts it: a refused request writes nothing.
	var resolved map[string]capabilities.Resolution
	check := func(cp store.Checkpoint) error {
		pending, err := capabilities.PendingInterrupts(cp.Values)
		if err != nil {
			return fmt.Errorf("thread %s: the saved %s value is not a list of interrupts: %w", req.ThreadID, capabilities.InterruptsKey, err)
		}
		switch {
		case answers == nil && len(pending) > 0:
			return &InterruptPendingError{ThreadID: req.ThreadID, IDs: pendingIDs(pending)}
		case answers != nil && len(pending) == 0:
			return fmt.Errorf("thread %s: %w", req.ThreadID, ErrNoInterruptPending)
		case answers != nil && cp.Route != prepared.Route.ID:
			return &ResumeError{Msg: fmt.Sprintf("route: thread %s parked on route %s, not %s; resume it on that route", req.ThreadID, cp.Route, prepared.Route.ID)}
		case answers != nil:
			if strat, err = resumeStrategy(a, prepared, cp, pending, answers); strat != nil || err != nil {
				// A run strategy parked the thread and goes on itself: no
				// held-back call to resolve, but the run is a resume.
				resolved = map[string]capabilities.Resolution{}
				return err
			}
			resolved, err = resolve(a, prepared, cp, pending, answers)
			return err
		}
		return nil
	}
	// The store calls use the request's context, not the run's: a cancel
	// that comes now stops the run once it starts, and is recorded so.
	cp, err := m.prepareThread(ctx, run, prepared, check)
	if err != nil {
		return abort(err)
	}
	var values thread.State
	if answers != nil {
		values = withDefaults(prepared, cp.Values)
		delete(values, capabilities.InterruptsKey)
		delete(values, capabilities.StrategyKey)
		remember := map[string]json.RawMessage{}
		for _, r := range resolved {
			maps.Copy(remember, r.Remember)
		}
		if err := m.store.SetAppValues(ctx, remember); err != nil {
			m.finishStore(run, store.RunInterrupted, err.Error(), nil, nil)
			return abort(err)
		}
	} else if values, err = prepared.ApplyInput(withDefaults(prepared, cp.Values), req.Values); err != nil {
		m.finishStore(run, store.RunError, err.Error(), nil, nil)
		return abort(&InputError{Msg: err.Error()})
	}

	cfg := agent.Config{
		Route:          prepared,
		Params:         params,
		Model:          model,
		ModelName:      spec,
		AppMaxTurns:    a.Config.Limits.WithDefaults().MaxTurns,
		AppTemperature: a.Config.Temperature,
		Stream:         req.Stream,
		Subagent:       m.subagentResolver(a),
		MaxDepth:       a.Config.Limits.WithDefaults().SubagentDepth,
		MaxToolOutput:  a.Config.Limits.WithDefaults().ToolOutputBytes,
		ToolTimeout:    a.Config.Tools.Timeout,
		Signal:         run.takeSignal,
		App:            m.appValues(run),
		Resolved:       resolved,
		Park:           true,
	}
	if m.tel != nil {
		cfg.Tracer = m.tel
	}
	runCtx = m.startTrace(runCtx, run)
	go func() {
		defer release()
		defer cancel()
		m.execute(runCtx, run, a, cfg, cp, values, req.Messages, strat)
	}()
	return run, nil
}

// appValues returns the app-wide values for run's hooks, read from the
// store the first time a hook asks. A store that cannot read them gives
// none: a tool a person allowed "always" then asks again, which is safe.
func (m *Manager) appValues(run *Run) func() thread.State {
	return sync.OnceValue(func() thread.State {
		values, err := m.store.AppValues(context.Background())
		if err != nil {
			m.logger.Error("cannot read the app's remembered decisions; they count as none for this run", "thread", run.ThreadID, "run", run.ID, "err", err)
			return thread.State{}
		}
		return values
	})
}

// prepareThread creates the thread if it is missing, records the run as
// running and loads the latest checkpoint, in one store transaction.
func (m *Manager) prepareThread(ctx context.Context, run *Run, p *capabilities.Prepared, check func(store.Checkpoint) error) (store.Checkpoint, error) {
	defer m.storeTimer("begin_run")()
	cp, err := m.store.BeginRunChecked(ctx, store.Run{ID: run.ID, ThreadID: run.ThreadID, Route: p.Route.ID, Status: store.RunRunning}, check)
	if errors.Is(err, store.ErrBusy) {
		return store.Checkpoint{}, ErrBusy
	}
	return cp, err
}

// withDefaults fills fields the thread has never set with the route's
// defaults (the plan seed, state.yaml defaults).
func withDefaults(p *capabilities.Prepared, values thread.State) thread.State {
	out := p.InitialState()
	for k, v := range values {
		out[k] = v
	}
	return out
}

// execute runs the agent loop, after strat when the run goes through a run
// strategy, and records the run's end.
func (m *Manager) execute(ctx context.Context, run *Run, a *app.App, cfg agent.Config, cp store.Checkpoint, values thread.State, input []thread.Message, strat *strategy) {
	step := cp.Step
	var saved int64
	last := values
	cfg.Emit = func(e stream.Event) {
		if e.Type == stream.TypeModelRetry || e.Type == stream.SubagentPrefix+stream.TypeModelRetry {
			m.logger.Warn("model call failed; trying again", "thread", run.ThreadID, "run", run.ID, "route", run.RouteID, "attempt", json.RawMessage(e.Data))
		}
		run.Log.Publish(e)
	}
	save := func(ctx context.Context, added []thread.Message, values thread.State) error {
		step++
		events := run.Log.Since(saved)
		defer m.storeTimer("save_step")()
		err := m.store.SaveStep(context.WithoutCancel(ctx), store.Step{
			ThreadID: run.ThreadID, RunID: run.ID, Route: run.RouteID, Step: step,
			Append: added, Values: values, Events: events,
		})
		if err != nil {
			step--
			return err
		}
		if len(events) > 0 {
			saved = events[len(events)-1].ID
		}
		last = values
		return nil
	}
	cfg.Checkpoint = save
	cfg.DeferLastCheckpoint = true
	host := &runHost{m: m, run: run, a: a, cfg: cfg, save: save}
	cfg.Steps = host // the route's tools may run steps on fresh agents too
	history := cp.Messages
	var res agent.Result
	var err error
	// sr is the strategy's result: it may stop the run before the loop,
	// with an output of its own.
	var sr capabilities.StrategyResult
	var parked *agent.Result // the strategy parked the run
	if strat != nil {
		sr, err = strat.run(ctx, host, history, values, input)
		if err == nil {
			parked, err = host.settle(ctx, strat, len(history), sr)
		}
		history, values, input = sr.Messages, sr.Values, nil
	}
	switch {
	case err != nil:
	case parked != nil:
		res = *parked
	case sr.Stop != "":
		res = agent.Result{Messages: history, Values: values, Stopped: sr.Stop}
	default:
		res, err = agent.Run(ctx, cfg, history, values, input)
	}
	// From here on the outcome is decided: a cancel that came first wins
	// over whatever the model or a tool did meanwhile (a model client may
	// return its partial text without an error when its context ends), and
	// a later one no longer reaches the run.
	cancelled, signal := run.end()
	if cancelled && !errors.Is(err, context.Canceled) {
		err = context.Canceled
	}
	if !cancelled && err == nil && signal == "pause" && sr.Stop == "" {
		// The pause came after the last step boundary: it takes effect on
		// the final state, as the supervisor was told. (A strategy that
		// stopped the run has acted on it.)
		if next, events, ok := cfg.Route.Signal(res.Values, signal); ok {
			res.Values = next
			publish(run, events)
		}
	}
	if cancelled && signal == "cancel" {
		// The supervisor cancelled the plan: record it on the last saved
		// state before the run ends.
		if next, events, ok := cfg.Route.Signal(last, "cancel"); ok {
			publish(run, events)
			if serr := save(context.Background(), nil, next); serr != nil {
				m.logger.Error("cannot save the cancelled plan", "thread", run.ThreadID, "err", serr)
			}
		}
	}
	status, errText := store.RunSuccess, ""
	var record json.RawMessage
	switch {
	case err == nil && len(res.Interrupts) > 0:
		// Parked for a person: the thread waits for a resume.
		status = store.RunInterrupted
		run.output, record = parkedOutput(res, sr.Output)
		run.interrupts = res.Interrupts
	case err == nil && sr.Output != nil:
		run.output = sr.Output
		record = run.output
	case err == nil:
		run.output = stateValues(res.Messages, res.Values)
		record = runRecord(res, strat, sr.Record)
	case cancelled:
		status = store.RunCancelled
		run.cancelled = true
		run.output = json.RawMessage(`{"cancelled":true}`)
		record = run.output
	default:
		status, errText = store.RunError, err.Error()
		run.output, _ = json.Marshal(map[string]string{"error": err.Error()})
		record = run.output
		m.logger.Warn("run failed", "thread", run.ThreadID, "run", run.ID, "route", run.RouteID, "err", err)
	}
	run.err = err
	if err != nil && cfg.Resolved != nil && step == cp.Step {
		// A resume that ended before it saved a step leaves the interrupts
		// pending in the saved state: the thread stays parked, so that it
		// can be resumed again rather than run on from unanswered calls.
		status = store.RunInterrupted
		errText = "the resume ended before it ran the held-back calls (" + err.Error() + "); the interrupts are still pending, resume again"
	}
	// The end of the run is saved before anyone hears of it: done goes into
	// the event log with the last step, the thread is freed, and only then
	// is done published. A client that sees done can read the final state
	// and start the next run at once, and a crash before the save loses
	// nothing a client was told about.
	done := stream.Event{ID: run.Log.LastID() + 1, Type: stream.TypeDone, Data: doneData(run.output)}
	if run.interrupts != nil {
		done.Data = doneData(record)
	}
	events := append(run.Log.Since(saved), done)
	if err == nil && sr.Stop == "" {
		// The last step and the end of the run land in one transaction.
		step++
		timed := m.storeTimer("save_step")
		err := m.store.SaveStep(context.Background(), store.Step{
			ThreadID: run.ThreadID, RunID: run.ID, Route: run.RouteID, Step: step,
			Append: res.Unsaved, Values: res.Values, Events: events,
			Finish: &store.Finish{Status: status, Output: record},
		})
		timed()
		if err != nil {
			m.logger.Error("cannot save the last step of a run", "thread", run.ThreadID, "run", run.ID, "err", err)
			run.err = err
			run.output = mustJSON(map[string]string{"error": "the last step could not be saved: " + err.Error()})
			done.Data = doneData(run.output)
			events[len(events)-1] = done
			m.finishStore(run, store.RunError, "the last step could not be saved: "+err.Error(), run.output, events)
		}
	} else {
		m.finishStore(run, status, errText, record, events)
	}
	run.endTrace(status)
	m.free(run)
	run.Log.Publish(done)
	run.Log.Close()
	close(run.done)
}

// publish publishes events on the run's stream.
func publish(run *Run, events []stream.Event) {
	for _, e := range events {
		run.Log.Publish(e)
	}
}

// free removes run from the runs in flight, if it is still the thread's.
func (m *Manager) free(run *Run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active[run.ThreadID] == run {
		delete(m.active, run.ThreadID)
	}
}

// runRecord is what the run's record keeps of a finished run: the final
// answer, the index of the final message, the run strategy's record under
// its option, why a hook stopped the run, and the final answer's metadata
// (the harness's plan snapshot as "plan").
func runRecord(res agent.Result, strat *strategy, strategyRecord any) json.RawMessage {
	rec := map[string]any{"answer": res.Answer, "message": len(res.Messages) - 1}
	if strat != nil && strategyRecord != nil {
		rec[strat.option] = strategyRecord
	}
	if res.Stopped != "" {
		rec["stopped"] = res.Stopped
	}
	// The final answer's metadata, such as the harness's plan snapshot.
	for k, v := range res.AnswerMeta {
		if _, taken := rec[k]; !taken {
			rec[k] = v
		}
	}
	return mustJSON(rec)
}

func (m *Manager) subagentResolver(a *app.App) func(*capabilities.Prepared, string) (*capabilities.Prepared, llms.Model, string, error) {
	return func(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error) {
		id := parent.Route.Subagents[name]
		child, ok := a.Routes[id]
		if !ok {
			return nil, nil, "", fmt.Errorf("subagent %q (route %s) is broken and cannot run; run `dawn check` to see why", name, id)
		}
		spec := a.ModelFor(child.Route, m.env)
		model, err := m.Model(spec)
		if err != nil {
			return nil, nil, "", err
		}
		return child, model, spec, nil
	}
}

func (m *Manager) checkInput(a *app.App, req Request) error {
	limits := a.Config.Limits.WithDefaults()
	if len(req.Messages) == 0 {
		return &InputError{Msg: `input.messages must hold at least one message, like [{"role":"user","content":"Hello"}]`}
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case thread.RoleUser, thread.RoleSystem:
		default:
			return &InputError{Msg: fmt.Sprintf("input.messages[%d].role must be user or system, not %q", i, msg.Role)}
		}
		if len(msg.Content) > limits.MessageBytes {
			return &InputError{Msg: fmt.Sprintf("input.messages[%d].content is %d bytes, over the %d byte limit (limits.message_bytes in dawn.yaml)", i, len(msg.Content), limits.MessageBytes)}
		}
	}
	return nil
}

// Shutdown stops new runs, waits for those in flight until ctx ends, then
// cancels the rest and waits for them to be recorded as cancelled.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	defer m.stopListening()
	done := make(chan struct{})
	go func() { m.inflight.Wait(); close(done) }()
	defer m.stopRetrying()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	m.mu.Lock()
	for _, r := range m.active {
		r.requestCancel("")
	}
	m.mu.Unlock()
	<-done
}

// stopRetrying makes a last attempt to record the ends of runs the store
// could not record, and stops retrying them in the background.
func (m *Manager) stopRetrying() {
	m.quitOnce.Do(func() { close(m.quit) })
	if n := m.settleAll(); n > 0 {
		m.logger.Error("the store could not record the end of some runs; they stay marked running and are recovered as interrupted at the next start", "runs", n)
	}
}

// DeleteThread deletes a thread that has no run in flight.
func (m *Manager) DeleteThread(ctx context.Context, threadID string) error {
	if m.Active(threadID) != nil {
		return ErrBusy
	}
	if err := m.settle(threadID); err != nil {
		return err
	}
	return m.store.DeleteThread(ctx, threadID)
}
