package runner

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// execution is one run on its goroutine: what it runs, what it has saved,
// and how it ended. execute moves it through its phases: drive, decide,
// signals, outcome and record.
type execution struct {
	m       *Manager
	run     *Run
	cfg     agent.Config
	strat   *strategy
	journal *journal
	host    *runHost
	// base is the checkpoint the run started from, what a rollback
	// restores.
	base store.Checkpoint
	// history, values and input are what the agent loop starts from.
	history []thread.Message
	values  thread.State
	input   []thread.Message

	// res is the run's result, sr its strategy's, err why it failed.
	res agent.Result
	sr  capabilities.StrategyResult
	err error
	// cancelled says a cancel came before the outcome was decided; signal
	// is the supervisor signal still pending then.
	cancelled bool
	signal    string
	// status, errText and record are the end of the run as the store
	// records it.
	status, errText string
	record          json.RawMessage
}

// execute runs the agent loop, after strat when the run goes through a run
// strategy, and records the run's end.
func (m *Manager) execute(ctx context.Context, run *Run, a *app.App, cfg agent.Config, cp store.Checkpoint, values thread.State, input []thread.Message, strat *strategy) {
	m.newExecution(run, a, cfg, cp, values, input, strat).execute(ctx)
}

// newExecution prepares run's execution. It is kept apart from execute
// because of the stack: a held run waits on its model deep below execute,
// and a goroutine's stack shrinks back only when what it uses while it
// waits is small, so the frames on that path hold pointers, not the
// configuration and checkpoint by value.
func (m *Manager) newExecution(run *Run, a *app.App, cfg agent.Config, cp store.Checkpoint, values thread.State, input []thread.Message, strat *strategy) *execution {
	j := newJournal(m, run, cp.Step, values)
	j.input = len(input)
	loop := newLoopHost(m, run, a, j)
	host := &runHost{m: m, run: run, a: a, loop: loop}
	loop.steps = host // the route's tools may run steps on fresh agents too
	cfg.Host = loop
	cfg.DeferLastCheckpoint = true
	host.cfg = cfg
	return &execution{m: m, run: run, cfg: cfg, strat: strat, journal: j, host: host, base: cp, history: cp.Messages, values: values, input: input}
}

// execute moves x through its phases.
func (x *execution) execute(ctx context.Context) {
	x.drive(ctx)
	x.decide()
	x.signals()
	x.outcome()
	x.recordEnd(ctx)
}

// drive runs the run's strategy, when it has one, and then the agent loop,
// unless the strategy parked or stopped the run.
func (x *execution) drive(ctx context.Context) {
	if x.strat != nil && !x.runStrategy(ctx) {
		return
	}
	x.res, x.err = agent.RunWith(ctx, &x.cfg, x.history, x.values, x.input)
}

// runStrategy runs the run's strategy and reports whether the agent loop
// runs next, on the history, values and input the strategy leaves.
func (x *execution) runStrategy(ctx context.Context) bool {
	var parked *agent.Result
	x.sr, x.err = x.strat.run(ctx, x.host, x.history, x.values, x.input)
	if x.err == nil {
		parked, x.err = x.host.settle(ctx, x.strat, len(x.history), x.sr)
	}
	switch {
	case x.err != nil:
		return false
	case parked != nil:
		x.res = *parked
		return false
	case x.sr.Stop != "":
		x.res = agent.Result{Messages: x.sr.Messages, Values: x.sr.Values, Stopped: x.sr.Stop}
		return false
	}
	x.history, x.values, x.input = x.sr.Messages, x.sr.Values, nil
	return true
}

// decide decides the run's outcome: a cancel that came first wins over
// whatever the model or a tool did meanwhile (a model client may return
// its partial text without an error when its context ends), and a later
// one no longer reaches the run.
func (x *execution) decide() {
	x.cancelled, x.signal = x.run.end()
	if x.cancelled && !errors.Is(x.err, context.Canceled) {
		x.err = context.Canceled
	}
}

// signals acts on the supervisor signal pending when the outcome was
// decided. A pause that came after the last step boundary takes effect on
// the final state, as the supervisor was told (a strategy that stopped the
// run has acted on it). A supervisor's cancel of the plan is recorded on
// the last saved state before the run ends.
func (x *execution) signals() {
	run, route := x.run, x.cfg.Route
	if !x.cancelled && x.err == nil && x.signal == "pause" && x.sr.Stop == "" {
		if next, events, ok := route.Signal(x.res.Values, x.signal); ok {
			x.res.Values = next
			publish(run, events)
		}
	}
	if !x.cancelled || x.signal != "cancel" {
		return
	}
	_, last := x.journal.saved()
	if next, events, ok := route.Signal(last, "cancel"); ok {
		publish(run, events)
		if err := x.journal.save(context.Background(), nil, next, nil); err != nil {
			x.m.logger.Error("cannot save the cancelled plan", "thread", run.ThreadID, "err", err)
		}
	}
}

// outcome sets what the run's waiters read (output, interrupts, error)
// and how the store records its end.
func (x *execution) outcome() {
	run, res, err := x.run, x.res, x.err
	x.status = store.RunSuccess
	switch {
	case err == nil && len(res.Interrupts) > 0:
		// Parked for a person: the thread waits for a resume.
		x.status = store.RunInterrupted
		run.output, x.record = parkedOutput(res, x.sr.Output)
		run.interrupts = res.Interrupts
	case err == nil && x.sr.Output != nil:
		run.output = x.sr.Output
		x.record = run.output
	case err == nil:
		run.output = stateValues(res.Messages, res.Values)
		x.record = runRecord(res, x.strat, x.sr.Record)
	case x.cancelled:
		x.status = store.RunCancelled
		run.cancelled = true
		run.output = json.RawMessage(`{"cancelled":true}`)
		x.record = run.output
	default:
		x.status, x.errText = store.RunError, errorText(err)
		run.output, _ = json.Marshal(map[string]string{"error": x.errText, "error_name": errorName(err)})
		x.record = run.output
		x.m.logger.Warn("run failed", "thread", run.ThreadID, "run", run.ID, "route", run.RouteID, "err", err)
	}
	run.err = err
	if saved, _ := x.journal.saved(); err != nil && x.cfg.Resolved != nil && !saved {
		// A resume that ended before it saved a step leaves the interrupts
		// pending in the saved state: the thread stays parked, so that it
		// can be resumed again rather than run on from unanswered calls.
		x.status = store.RunInterrupted
		x.errText = "the resume ended before it ran the held-back calls (" + errorText(err) + "); the interrupts are still pending, resume again"
	}
}

// discard rolls the cancelled run back: the thread's state becomes the
// checkpoint it started from and the run is deleted. When the store
// cannot, the run is recorded as cancelled, its steps kept.
func (x *execution) discard() bool {
	err := x.m.runs.DiscardRun(context.Background(), x.run.ID, x.base)
	if err != nil {
		x.m.logger.Error("cannot roll back a run; it is recorded as cancelled with its steps", "thread", x.run.ThreadID, "run", x.run.ID, "err", err)
		return false
	}
	return true
}

// recordEnd saves the end of the run before anyone hears of it: done goes
// into the event log with the last step, the thread is freed, and only
// then is done published. A client that sees done can read the final
// state and start the next run at once, and a crash before the save loses
// nothing a client was told about.
//
// A run another server took over (see adopt) records nothing here: its
// waiters get the end the other server records.
func (x *execution) recordEnd(ctx context.Context) {
	run, m := x.run, x.m
	done := stream.Event{ID: run.Log.LastID() + 1, Type: stream.TypeDone, Data: doneData(run.output)}
	if run.interrupts != nil {
		done.Data = doneData(x.record)
	}
	hook := m.webhookOf(run, x.status, x.errText)
	switch {
	case !x.cancelled && takenElsewhere(x.err):
		done, hook = x.adopt(ctx), nil
	case x.cancelled && run.rollingBack() && x.discard():
		m.addWebhook(run, hook)
	case x.err == nil && x.sr.Stop == "":
		// The last step, the end of the run and its webhook delivery land
		// in one transaction.
		err := x.journal.save(context.Background(), x.res.Unsaved, x.res.Values, &store.Finish{Status: x.status, Output: x.record, Webhook: hook}, done)
		if takenElsewhere(err) {
			done, hook = x.adopt(ctx), nil
		} else if err != nil {
			m.logger.Error("cannot save the last step of a run", "thread", run.ThreadID, "run", run.ID, "err", err)
			run.err = err
			text := "the last step could not be saved: " + errorText(err)
			run.output = mustJSON(map[string]string{"error": text})
			done.Data = doneData(run.output)
			hook = m.webhookOf(run, store.RunError, text)
			m.finishStore(run, store.RunError, text, run.output, x.journal.unsaved(done), hook)
		}
	default:
		m.finishStore(run, x.status, x.errText, x.record, x.journal.unsaved(done), hook)
	}
	run.endTrace(x.status)
	m.free(run)
	run.Log.Publish(done)
	run.Log.Close()
	close(run.done)
	m.sendWebhooks(hook)
}
