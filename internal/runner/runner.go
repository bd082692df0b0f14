package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/ownership"
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
	// store is the whole store, which Store hands on and which may also
	// notify other processes (store.Notifier) or forget a person
	// (store.Forgetter); the manager works on it through its parts.
	store   store.Store
	threads store.Threads
	runs    store.Runs
	queue   store.Queue
	history store.History
	outputs store.ToolOutputs
	values  store.AppValues
	audit   store.AuditLog
	items   store.Items
	outbox  store.Webhooks
	admin   store.Admin

	app    atomic.Pointer[app.App]
	env    func(string) string
	logger *slog.Logger

	newModel ModelFactory
	tel      *telemetry.Telemetry
	webhooks Webhooks
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
	// Webhooks sends the POSTs run requests ask for, from st's outbox,
	// which New starts it on; nil refuses requests that carry a webhook.
	Webhooks Webhooks
}

// New returns a Manager running routes of a on st.
func New(st store.Store, a *app.App, opts Options) *Manager {
	m := &Manager{
		store: st, threads: st, runs: st, queue: st, history: st, outputs: st, values: st, audit: st, items: st, outbox: st, admin: st,
		env: opts.Env, logger: opts.Logger, newModel: opts.Models, tel: opts.Telemetry, webhooks: opts.Webhooks, maxRuns: max(opts.MaxRuns, 0),
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
	m.SetApp(a)
	if m.webhooks != nil {
		m.webhooks.Start(m.outbox)
		if q, ok := st.(queuedWebhooks); ok {
			q.SetQueuedWebhook(m.queuedWebhook)
		}
	}
	if n := m.notifier(); n != nil {
		m.stopRemote = make(chan struct{})
		m.listenSignals(n)
	}
	return m
}

// App returns the app snapshot new runs use.
func (m *Manager) App() *app.App { return m.app.Load() }

// SetApp swaps the app snapshot. Runs in flight finish on the snapshot they
// started with; the next run uses a. The store's per-user quotas follow
// a's limits.per_user.
func (m *Manager) SetApp(a *app.App) {
	m.app.Store(a)
	if a == nil {
		return
	}
	u := a.Config.Limits.WithDefaults().PerUser
	m.admin.SetQuotas(store.Quotas{Threads: u.Threads, Crons: u.Crons, QueuedRuns: u.QueuedRuns, Items: u.StoreItems})
}

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
		return nil, &ModelUnavailableError{Spec: spec, Err: err}
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
	// Webhook is a URL the run is POSTed to when it ends or parks.
	Webhook string

	// OnCaller asks for the run to execute on the caller's goroutine:
	// Start returns it registered but not going, and the caller must call
	// Run.Execute, which returns once the run is done. A caller that would
	// only wait for the run (runs/wait) so holds one goroutine, not two.
	// A queued run does not keep it: the queue starts it on its own.
	OnCaller bool `json:"-"`

	// queuedID is the id of the queued run this request starts (see
	// Enqueue), or "".
	queuedID string
	// Checkpoint, when set, is a kept checkpoint of the thread to start
	// from: the thread starts a new branch there (store.Run.Checkpoint).
	Checkpoint string
	// Overrides change what the route's agent.md sets, for this run.
	Overrides Overrides
	// NoInput lets the run start without new messages: the model goes on
	// from the thread's (a LangGraph run with input {"messages": []}).
	NoInput bool
	// Metadata is a JSON object kept with the run (store.Run.Metadata);
	// nil keeps none.
	Metadata json.RawMessage
	// ThreadMetadata is a JSON object whose members are set in the
	// thread's metadata as the run begins (store.Run.ThreadMetadata); nil
	// sets none.
	ThreadMetadata json.RawMessage
	// Attrs is a JSON value kept with the run for its starter
	// (store.Run.Attrs); nil keeps none.
	Attrs json.RawMessage
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

// Rollback stops the run in flight on threadID as Cancel does, and has it
// discard what it saved: the thread's state goes back to the checkpoint
// the run started from, and the run is deleted (multitask_strategy
// "rollback"). It returns the run, or nil when there is none; ok is false
// when its outcome was already decided.
func (m *Manager) Rollback(threadID string) (run *Run, ok bool) {
	r := m.Active(threadID)
	if r == nil {
		return nil, false
	}
	return r, r.requestRollback()
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
	if err := req.Overrides.Check(prepared); err != nil {
		return nil, err
	}
	prepared = req.Overrides.apply(prepared)
	adm := &admission{a: a, p: prepared, threadID: req.ThreadID, answers: answers}
	if err := m.checkWebhook(ctx, req.Webhook); err != nil {
		return nil, err
	}
	if answers == nil { // a resume goes on as the parked run went
		if err := m.checkInput(a, req); err != nil {
			return nil, err
		}
		if adm.strat, err = chooseStrategy(a, prepared, req); err != nil {
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
	runCtx, cancel := context.WithCancel(models.WithMarkers(context.WithoutCancel(ctx), a.Config.Markers))
	run := &Run{ID: cmp.Or(req.queuedID, uuid.NewString()), ThreadID: req.ThreadID, RouteID: prepared.Route.ID, Model: spec, Log: stream.NewLog(), done: make(chan struct{}), cancel: cancel, webhook: req.Webhook, queued: req.queuedID != ""}
	run.user, run.metadata, run.threadMetadata, run.attrs = userOf(ctx), req.Metadata, req.ThreadMetadata, req.Attrs
	if a.Config.Runs.ContinueOrphans && answers == nil && adm.strat == nil {
		run.request = encodeRequest(req, ctx)
	}
	if err := m.reserve(run); err != nil {
		cancel()
		return nil, err
	}
	// A run whose end the store could not record still holds the thread
	// there: record it first.
	if err := m.settle(req.ThreadID); err != nil {
		return m.abort(run, err)
	}
	// A parked thread goes on only through a resume, which must answer its
	// interrupts. Both are checked on the checkpoint the run starts from,
	// in the transaction that starts it: a refused request writes nothing.
	// The store calls use the request's context, not the run's: a cancel
	// that comes now stops the run once it starts, and is recorded so.
	cp, err := m.prepareThread(ctx, run, prepared, req.Checkpoint, adm.check)
	if err != nil {
		return m.abort(run, err)
	}
	values, err := m.startValues(ctx, run, adm, cp, req.Values)
	if err != nil {
		return m.abort(run, err)
	}
	cfg := m.agentConfig(a, prepared, params, model, spec, req.Stream, req.ThreadID)
	cfg.RunID = run.ID
	cfg.Resolved = adm.resolved
	runCtx = m.startTrace(runCtx, run)
	// The thread's requests share a provider prompt cache.
	runCtx = models.WithPromptCacheKey(runCtx, run.ThreadID)
	// The execution is prepared here, not on the goroutine that runs it:
	// that one then waits on the model with less of its stack in use.
	x := m.newExecution(run, a, cfg, cp, values, req.Messages, adm.strat)
	exec := func() {
		// Once the thread is free, the next of its queue may start.
		defer m.wakeQueue(run.ThreadID)
		defer m.release(run)
		defer cancel()
		x.execute(runCtx)
	}
	if req.OnCaller && req.queuedID == "" {
		run.exec = exec
		return run, nil
	}
	go exec()
	return run, nil
}

// agentConfig is the agent loop's configuration for a run of route p with
// params on model (named spec): the app's limits and settings.
func (m *Manager) agentConfig(a *app.App, p *capabilities.Prepared, params map[string]string, model llms.Model, spec string, streamText bool, threadID string) agent.Config {
	limits := a.Config.Limits.WithDefaults()
	cfg := agent.Config{
		Route:          p,
		Params:         params,
		Model:          model,
		ModelName:      spec,
		AppMaxTurns:    limits.MaxTurns,
		AppTemperature: a.Config.Temperature,
		Stream:         streamText,
		MaxDepth:       limits.SubagentDepth,
		MaxToolOutput:  limits.ToolOutputBytes,
		ToolTimeout:    a.Config.Tools.Timeout,
		Park:           true,
		RecordStarted:  a.Config.Runs.ContinueOrphans,
		Models:         m.Model,
		Outputs:        toolOutputs{m.outputs, threadID},
		ThreadID:       threadID,
	}
	if m.tel != nil {
		cfg.Tracer = m.tel
	}
	return cfg
}

// reserve registers run as its thread's run in flight, unless the manager
// is shutting down, the thread has a run already, or MaxRuns are in
// flight.
func (m *Manager) reserve(run *Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closing:
		return ErrShuttingDown
	case m.active[run.ThreadID] != nil:
		return ErrBusy
	case m.maxRuns > 0 && len(m.active) >= m.maxRuns:
		return ErrOverloaded
	}
	m.active[run.ThreadID] = run
	m.inflight.Add(1)
	return nil
}

// release frees the thread of a run reserve registered.
func (m *Manager) release(run *Run) {
	m.free(run)
	m.inflight.Done()
}

// abort ends a run that never got going: whoever cancelled it in the
// meantime is waiting for Done.
func (m *Manager) abort(run *Run, err error) (*Run, error) {
	run.end()
	run.cancel()
	run.err = err
	run.output = mustJSON(map[string]string{"error": errorText(err)})
	m.release(run)
	run.Log.Close()
	close(run.done)
	return nil, err
}

// startValues returns the state the run starts from: the thread's saved
// values with the route's defaults, and then, for a new run, the fields
// its input sets or, for a resume, without the answered interrupts (what
// the answers asked the app to remember is stored first). A refusal is
// recorded as the run's end.
func (m *Manager) startValues(ctx context.Context, run *Run, adm *admission, cp store.Checkpoint, input map[string]json.RawMessage) (thread.State, error) {
	values := withDefaults(adm.p, cp.Values)
	if adm.answers == nil {
		values, err := adm.p.ApplyInput(values, input)
		if err != nil {
			m.finishStore(run, store.RunError, err.Error(), nil, nil, nil)
			return nil, &InputError{Msg: err.Error()}
		}
		return values, nil
	}
	delete(values, capabilities.InterruptsKey)
	delete(values, capabilities.StrategyKey)
	values[capabilities.DecisionsKey] = recordDecisions(ctx, values[capabilities.DecisionsKey], adm, time.Now())
	remember := map[string]json.RawMessage{}
	for _, r := range adm.resolved {
		maps.Copy(remember, r.Remember)
	}
	if err := m.values.SetAppValues(ctx, scopeRemembered(ctx, remember)); err != nil {
		m.finishStore(run, store.RunInterrupted, err.Error(), nil, nil, nil)
		return nil, err
	}
	m.auditDecisions(ctx, run.ThreadID, adm)
	return values, nil
}

// prepareThread creates the thread if it is missing, records the run as
// running, starts a branch from checkpoint from when set, and loads the
// latest checkpoint, which check accepts, in one store transaction.
func (m *Manager) prepareThread(ctx context.Context, run *Run, p *capabilities.Prepared, from string, check func(store.Checkpoint) error) (store.Checkpoint, error) {
	defer m.storeTimer("begin_run")()
	// The caller's user owns a thread the run creates; another user's
	// thread is not found (ownership.Owner: "" checks nothing).
	owner, _ := ownership.Owner(ctx)
	cp, err := m.runs.BeginRunChecked(ctx, store.Run{ID: run.ID, ThreadID: run.ThreadID, Route: p.Route.ID, Status: store.RunRunning, Owner: owner, Ephemeral: ephemeralThread(ctx), Queued: run.queued, Request: run.request, Metadata: run.metadata, ThreadMetadata: run.threadMetadata, Attrs: run.attrs, Checkpoint: from}, check)
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

func (m *Manager) checkInput(a *app.App, req Request) error {
	limits := a.Config.Limits.WithDefaults()
	if len(req.Messages) == 0 && req.Checkpoint == "" && !req.NoInput {
		// A run from a checkpoint may go on without input: it answers
		// again from there (regenerates).
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
		// A run whose outcome is decided may still follow another
		// server's end of it (adopt): that stops too.
		r.cancel()
	}
	m.mu.Unlock()
	<-done
}

// Stopped is closed once Shutdown has finished: what runs beside the
// runner, such as a scheduler of crons, stops with it.
func (m *Manager) Stopped() <-chan struct{} { return m.quit }

// Draining reports whether Shutdown has begun: the manager takes no new
// runs while the ones in flight finish.
func (m *Manager) Draining() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closing
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
	if err := m.threads.DeleteThread(ctx, threadID); err != nil {
		return err
	}
	m.cleanThread(ctx, threadID)
	return nil
}
