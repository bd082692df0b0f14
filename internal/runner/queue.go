package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/capabilities"

	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
)

// DefaultQueueBound is the most runs a thread's queue holds (runs waiting
// with multitask_strategy "enqueue" or after_seconds); Enqueue refuses
// more with ErrQueueFull.
const DefaultQueueBound = 100

// QueueSweep is how often SweepQueue looks for queued runs to start: runs
// whose delay has passed, and runs that no end of a run woke (their
// thread's run ended on a replica that went away, say).
const QueueSweep = time.Second

// ErrQueueFull is returned by Enqueue when the thread's queue is full.
var ErrQueueFull = fmt.Errorf("the thread's queue holds %d runs, the most it may: wait for some to start, or cancel one", DefaultQueueBound)

// dueBatch is how many queued runs one look starts at most.
const dueBatch = 64

// Enqueue checks req as Start does and adds it to the end of its thread's
// queue, durable in the store, to start once the thread has no run in
// flight and notBefore (zero: now) has passed, on whichever replica of a
// shared store is free first. The returned run is pending; the run that
// starts later has its id. A thread with no run in flight starts it at
// once.
func (m *Manager) Enqueue(ctx context.Context, req Request, notBefore time.Time) (store.Run, error) {
	a := m.App()
	prepared, _, err := a.Resolve(req.Route)
	if err != nil {
		return store.Run{}, err
	}
	if err := m.checkWebhook(ctx, req.Webhook); err != nil {
		return store.Run{}, err
	}
	if err := m.checkInput(a, req); err != nil {
		return store.Run{}, err
	}
	if _, err := chooseStrategy(a, prepared, req); err != nil {
		return store.Run{}, err
	}
	if m.Draining() {
		return store.Run{}, ErrShuttingDown
	}
	req.queuedID = ""
	kept := queuedRequest{Request: req}
	if id, ok := capabilities.IdentityFrom(ctx); ok {
		kept.Identity = &id
	}
	body, err := json.Marshal(kept)
	if err != nil {
		return store.Run{}, fmt.Errorf("thread %s: the run cannot be queued: %w", req.ThreadID, err)
	}
	// The thread a queued run creates is its caller's, as a started run's
	// is: a run is never queued where its caller could not start it.
	owner, _ := ownership.Owner(ctx)
	q, err := m.queue.EnqueueRun(ctx, store.QueuedRun{ID: uuid.NewString(), ThreadID: req.ThreadID, Route: prepared.Route.ID, Request: body, NotBefore: notBefore, Owner: owner, Ephemeral: ephemeralThread(ctx)}, DefaultQueueBound)
	if errors.Is(err, store.ErrQueueFull) {
		return store.Run{}, fmt.Errorf("thread %s: %w", req.ThreadID, ErrQueueFull)
	}
	if err != nil {
		return store.Run{}, err
	}
	m.wakeQueue(req.ThreadID)
	return q.Run(), nil
}

// Dequeue cancels a queued run that has not started: it leaves the queue
// and is recorded as cancelled. It fails with store.ErrNotFound when the
// run is not queued.
func (m *Manager) Dequeue(ctx context.Context, runID string) error {
	if err := m.queue.DequeueRun(ctx, runID); err != nil {
		return err
	}
	m.wakeWebhooks()
	return nil
}

// AwaitStart waits until queued run runID has left the queue, and returns
// it as the store has it then: running (here or on another replica) or
// already ended; or ctx's error.
func (m *Manager) AwaitStart(ctx context.Context, runID string) (store.Run, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		r, err := m.runs.GetRun(ctx, runID)
		if err != nil || r.Status != store.RunPending {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-t.C:
		}
	}
}

// SweepQueue starts the queued runs that are due, now and every
// QueueSweep, until ctx ends: a server calls it once, so that runs queued
// before a restart, or behind a run whose replica went away, and runs
// whose delay has passed start.
func (m *Manager) SweepQueue(ctx context.Context) {
	t := time.NewTicker(QueueSweep)
	defer t.Stop()
	for {
		m.startDue(ctx, "")
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// wakeQueue starts, in the background, the head of a thread's queue if it
// is due: called when a run is queued and when a run of the thread ends.
// Under a --max-runs cap, a run's end also frees room for the queued runs
// of other threads that found the server full. One read of whether any
// run is queued at all covers both.
func (m *Manager) wakeQueue(threadID string) {
	if m.Draining() {
		return
	}
	go func() {
		ctx := context.Background()
		if m.noneQueued(ctx) {
			return
		}
		m.startDueRuns(ctx, threadID)
		if m.maxRuns > 0 {
			m.startDueRuns(ctx, "")
		}
	}()
}

// startDue starts the due queued runs of threadID, or of every thread
// when it is empty.
func (m *Manager) startDue(ctx context.Context, threadID string) {
	if m.noneQueued(ctx) {
		return
	}
	m.startDueRuns(ctx, threadID)
}

// noneQueued reports whether the store holds no queued run at all. Most
// ends of runs find no queue: one cheap read instead of the due-run query
// (it was a fifth of a run's CPU). A failed read answers false, so the
// due-run query runs and reports the failure.
func (m *Manager) noneQueued(ctx context.Context) bool {
	queued, err := m.queue.AnyQueued(ctx)
	return err == nil && !queued
}

// startDueRuns starts the due queued runs of threadID, or of every
// thread when it is empty. It reads them a page at a time, owners in turn
// (store.DueRuns), until none is left: a run that stays queued (its
// thread became busy meanwhile, the store failed) is skipped on the next
// page, so however many there are, every due run is tried. A server at
// --max-runs or draining starts no more.
func (m *Manager) startDueRuns(ctx context.Context, threadID string) {
	stayed := 0
	for {
		due, err := m.queue.DueRuns(ctx, threadID, time.Now(), stayed, dueBatch)
		if err != nil {
			if ctx.Err() == nil && !m.Draining() {
				m.logger.Debug("cannot read the queued runs; trying again shortly", "err", err)
			}
			return
		}
		for _, q := range due {
			switch m.startChain(ctx, q) {
			case queueFull:
				return
			case queueStayed:
				stayed++
			}
		}
		if len(due) < dueBatch {
			return
		}
	}
}

// What starting a queued run came to.
const (
	queueStarted = iota // it started, or ended without starting
	queueStayed         // it stays queued, to be tried again later
	queueFull           // the server takes no more runs now
)

// startChain starts queued run q and, while a run of its thread ends
// without starting (which leaves the thread free), the next of its queue.
func (m *Manager) startChain(ctx context.Context, q store.QueuedRun) int {
	for {
		outcome, failed := m.startQueued(ctx, q)
		if !failed {
			return outcome
		}
		next, err := m.queue.DueRuns(ctx, q.ThreadID, time.Now(), 0, 1)
		if err != nil || len(next) == 0 {
			return queueStarted
		}
		q = next[0]
	}
}

// startQueued starts queued run q. A run that cannot start now (its
// thread is busy, the server is full or draining, the store is
// unreachable) stays queued; one that can never start (its route is gone,
// its thread waits for a person or is not its caller's, its request is
// refused) ends with an error that says why, and failed reports it.
func (m *Manager) startQueued(ctx context.Context, q store.QueuedRun) (outcome int, failed bool) {
	var kept queuedRequest
	if err := json.Unmarshal(q.Request, &kept); err != nil {
		return queueStarted, m.failQueued(ctx, q, fmt.Errorf("the queued request cannot be read: %w", err))
	}
	req := kept.Request
	req.queuedID = q.ID
	runCtx := ctx
	if kept.Identity != nil {
		// The run acts for the caller who queued it.
		runCtx = capabilities.WithIdentity(ctx, *kept.Identity)
	}
	_, err := m.start(runCtx, req, nil)
	switch {
	case err == nil:
		return queueStarted, false
	case errors.Is(err, ErrOverloaded), errors.Is(err, ErrShuttingDown), ctx.Err() != nil:
		return queueFull, false
	case errors.Is(err, ErrBusy), errors.Is(err, store.ErrUnavailable):
		return queueStayed, false
	case errors.Is(err, store.ErrNotFound) && !m.stillQueued(ctx, q.ID):
		// Another replica started it, or a client cancelled it.
		return queueStarted, false
	}
	return queueStarted, m.failQueued(ctx, q, err)
}

// stillQueued reports whether run id is still queued, after an attempt to
// start it found something missing: when it is, what is missing is not
// the queued run but what it needs (its thread is someone else's, its
// checkpoint is gone), and it can never start. A store that cannot say
// counts as not queued: the run is tried again.
func (m *Manager) stillQueued(ctx context.Context, id string) bool {
	r, err := m.runs.GetRun(ctx, id)
	return err == nil && r.Status == store.RunPending
}

// queuedRequest is a queued run's request as the store keeps it, with the
// caller who queued it, whom the run acts for once it starts.
type queuedRequest struct {
	Request
	Identity *capabilities.Identity `json:"identity,omitempty"`
}

// failQueued ends queued run q with err, and reports whether it did.
func (m *Manager) failQueued(ctx context.Context, q store.QueuedRun, err error) bool {
	ferr := m.queue.FailQueued(ctx, q.ID, errorText(err))
	if ferr == nil {
		m.wakeWebhooks()
	}
	if ferr != nil && !errors.Is(ferr, store.ErrNotFound) {
		m.logger.Warn("cannot record why a queued run could not start", "run", q.ID, "thread", q.ThreadID, "err", ferr)
	}
	return ferr == nil
}
