package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Continuation of orphaned runs.
//
// With dawn.yaml's runs: {continue_orphans: true}, a new run keeps its
// request in the store (keptRequest), and each tool turn is saved before
// its calls run (agent.Config.RecordStarted). When the server running it
// is gone (the store's lease rules), ContinueOrphans claims the run for
// this server, once across every server sharing the store, and goes on
// from its last committed step: same run id, its event log replayed from
// the store and continued with the next ids, the calls a crash cut off
// answered as outcome unknown (or run again, for idempotent tools). A run
// that cannot go on (its route is gone, say) is marked interrupted, as
// every run is without the setting.

// keptRequest is what a run keeps of its request so that another server
// can continue it.
type keptRequest struct {
	Route    string                     `json:"route"`
	Messages []thread.Message           `json:"messages"`
	Values   map[string]json.RawMessage `json:"values,omitempty"`
	Stream   bool                       `json:"stream,omitempty"`
	Options  map[string]string          `json:"options,omitempty"`
	Webhook  string                     `json:"webhook,omitempty"`
	// Overrides are what the run's client changed of its route (model,
	// temperature, tools, turn limit, pauses): a continued run keeps
	// them, as it keeps its caller.
	Overrides keptOverrides `json:"overrides,omitzero"`
	// NoInput says the run started without new messages, going on from
	// the thread's (Request.NoInput).
	NoInput bool `json:"no_input,omitempty"`
	// Identity is the caller the run acts for, when the server
	// authenticated one: the continued run's tools see the same caller.
	Identity *capabilities.Identity `json:"identity,omitempty"`
}

// encodeRequest is req, started by the caller ctx carries, as a run keeps
// it.
func encodeRequest(req Request, ctx context.Context) []byte {
	k := keptRequest{Route: req.Route, Messages: req.Messages, Values: req.Values,
		Stream: req.Stream, Options: req.Options, Webhook: req.Webhook,
		Overrides: keptOverrides(req.Overrides), NoInput: req.NoInput}
	if id, ok := capabilities.IdentityFrom(ctx); ok {
		k.Identity = &id
	}
	return mustJSON(k)
}

// notContinuedText is the error of a claimed run this server could not
// continue; why follows it.
const notContinuedText = "the server stopped while this run was in flight, and the run could not be continued"

// ContinueOrphans claims the runs of servers that are gone and continues
// each one here, from its last committed step; the runs of gone servers
// that kept no request (started without continue_orphans) are marked
// interrupted, as RecoverInterrupted does. It returns how many runs it
// continued and how many it marked interrupted. It is safe to call from
// every server sharing the store, at start-up and now and then: each run
// is continued by one of them.
func (m *Manager) ContinueOrphans(ctx context.Context) (continued, interrupted int, err error) {
	claimed, interrupted, err := m.runs.ClaimOrphans(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range claimed {
		if err := m.continueRun(ctx, r); err != nil {
			m.logger.Warn("cannot continue the run of a server that is gone; marked interrupted", "thread", r.ThreadID, "run", r.ID, "err", err)
			interrupted++
			continue
		}
		m.logger.Info("continuing the run of a server that is gone", "thread", r.ThreadID, "run", r.ID, "route", r.Route)
		continued++
	}
	return continued, interrupted, nil
}

// continueRun continues claimed run r here, or marks it interrupted and
// says why not. A mark the store cannot record yet is retried as the end
// of any run is (finishStore): the run is this server's now, and nobody
// else would end it.
func (m *Manager) continueRun(ctx context.Context, r store.Run) error {
	c, err := m.prepareContinuation(ctx, r)
	if err != nil {
		m.finishStore(&Run{ID: r.ID, ThreadID: r.ThreadID}, store.RunInterrupted, notContinuedText+": "+errorText(err), nil, nil, nil)
		return err
	}
	go func() {
		defer m.release(c.run)
		defer c.cancel()
		m.execute(c.ctx, c.run, c.a, c.cfg, c.cp, c.values, c.input, nil)
	}()
	return nil
}

// prepareContinuation builds the run that continues claimed run r: the
// route its request named, the checkpoint it goes on from, and its log
// replayed from the store. It registers the run as its thread's run in
// flight; on an error nothing is left registered.
func (m *Manager) prepareContinuation(ctx context.Context, r store.Run) (*continuation, error) {
	var req keptRequest
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return nil, fmt.Errorf("its kept request cannot be read: %w", err)
	}
	a := m.App()
	prepared, params, err := a.Resolve(req.Route)
	if err != nil {
		return nil, err
	}
	overrides := Overrides(req.Overrides)
	if err := overrides.Check(prepared); err != nil {
		return nil, err
	}
	prepared = overrides.apply(prepared)
	spec := a.ModelFor(prepared.Route, m.env)
	model, err := m.Model(spec)
	if err != nil {
		return nil, err
	}
	base := context.Background()
	if req.Identity != nil {
		base = capabilities.WithIdentity(base, *req.Identity)
	}
	runCtx, cancel := context.WithCancel(models.WithMarkers(base, a.Config.Markers))
	run := &Run{ID: r.ID, ThreadID: r.ThreadID, RouteID: prepared.Route.ID, Model: spec, Log: stream.NewLog(),
		done: make(chan struct{}), cancel: cancel, webhook: req.Webhook, request: r.Request}
	run.user = userOf(base)
	c := &continuation{run: run, a: a, cancel: cancel}
	if err := m.reserve(run); err != nil {
		cancel()
		return nil, err
	}
	if err := c.load(ctx, m, prepared, req); err != nil {
		_, err = m.abort(run, err)
		return nil, err
	}
	c.cfg = m.agentConfig(a, prepared, params, model, spec, req.Stream, r.ThreadID)
	c.cfg.RunID = r.ID
	c.cfg.Continue = !c.fresh
	c.ctx = models.WithPromptCacheKey(m.startTrace(runCtx, run), run.ThreadID)
	return c, nil
}

// continuation is a claimed run ready to go on here.
type continuation struct {
	run    *Run
	a      *app.App
	ctx    context.Context
	cancel context.CancelFunc
	cfg    agent.Config
	cp     store.Checkpoint
	values thread.State
	// fresh says the run had saved no step, so that it starts over from
	// input, its input messages (none for a run started without).
	fresh bool
	input []thread.Message
}

// load reads what the run goes on from: the thread's latest checkpoint,
// and the run's committed events, replayed into its log so that a client
// joining here gets the whole run and the next event follows the last one
// committed. A run that saved a step goes on from it; one that saved none
// starts over from its input, which only its kept request holds.
func (c *continuation) load(ctx context.Context, m *Manager, p *capabilities.Prepared, req keptRequest) error {
	cp, err := m.history.Latest(ctx, c.run.ThreadID)
	if err != nil {
		return err
	}
	if err := c.replay(ctx, m); err != nil {
		return err
	}
	c.cp = cp
	values := withDefaults(p, cp.Values)
	if cp.RunID == c.run.ID {
		c.values = values
		return nil
	}
	pending, err := capabilities.PendingInterrupts(cp.Values)
	switch {
	case err != nil:
		return err
	case len(pending) > 0:
		return fmt.Errorf("thread %s waits for a decision on interrupt %s", c.run.ThreadID, pending[0].ID)
	case len(req.Messages) == 0 && !req.NoInput:
		return errors.New("its kept request has no input messages")
	}
	if c.values, err = p.ApplyInput(values, req.Values); err != nil {
		return err
	}
	c.fresh, c.input = true, req.Messages
	return nil
}

// replayPage is how many committed events replay reads at once.
const replayPage = 512

// replay publishes the run's committed events into its log, each with the
// id it was committed with.
func (c *continuation) replay(ctx context.Context, m *Manager) error {
	var after int64
	for {
		page, err := m.history.EventsPage(ctx, c.run.ID, after, replayPage)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			c.run.stored = after
			return nil
		}
		for _, e := range page {
			if got := c.run.Log.Publish(e); got.ID != e.ID {
				return fmt.Errorf("its event log has event %d where %d should be", e.ID, got.ID)
			}
		}
		after = page[len(page)-1].ID
	}
}
