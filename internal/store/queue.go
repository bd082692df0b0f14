package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// RunPending is the status of a queued run: it waits for its thread to be
// free (and for its time, when delayed). It is not a status of the runs
// table: a queued run becomes a running run when it starts.
const RunPending = "pending"

// ErrQueueFull is returned by EnqueueRun when the thread's queue holds as
// many runs as it may.
var ErrQueueFull = errors.New("the thread's queue of runs is full")

// QueuedRun is a run waiting for its thread: the head of a thread's queue
// (least NotBefore, then the order they were queued in) starts when the
// thread has no running run and NotBefore has passed.
type QueuedRun struct {
	ID, ThreadID, Route string
	// Request is what the runner starts the run with, as JSON.
	Request   json.RawMessage
	NotBefore time.Time
	CreatedAt time.Time
	// Owner, when not "", is the user the run acts for: a thread
	// EnqueueRun creates belongs to them, and a thread that belongs to
	// anyone else is not theirs to queue on (ErrNotFound, as if it did
	// not exist), as Run.Owner is for BeginRunChecked. DueRuns reports
	// the owner of the run's thread.
	Owner string
	// Ephemeral makes a thread EnqueueRun creates ephemeral, as
	// Run.Ephemeral does one BeginRunChecked creates.
	Ephemeral bool
}

// Run returns q as a run of the runs list, with status RunPending.
func (q QueuedRun) Run() Run {
	return Run{ID: q.ID, ThreadID: q.ThreadID, Route: q.Route, Status: RunPending, CreatedAt: q.CreatedAt, UpdatedAt: q.CreatedAt}
}

// EnqueueRun adds q to the end of its thread's queue, creating the thread
// (idle, no metadata, owned by q.Owner) when it does not exist. A zero
// NotBefore means now. It fails with ErrQueueFull when the thread already
// holds bound queued runs (bound 0: no bound), ErrExists when the id is
// taken by a queued run, ErrNotFound when q.Owner is set and the thread
// belongs to someone else (checked on the locked thread: a run is never
// queued where it could never start), and ErrInvalid for a request that
// is not JSON.
func (s *DB) EnqueueRun(ctx context.Context, q QueuedRun, bound int) (QueuedRun, error) {
	if err := checkID("run", q.ID); err != nil {
		return q, err
	}
	if err := checkID("thread", q.ThreadID); err != nil {
		return q, err
	}
	if !json.Valid(q.Request) {
		return q, fmt.Errorf("run %q: %w: the queued request is not valid JSON", q.ID, ErrInvalid)
	}
	now := s.now()
	row := dialect.QueuedRow{ID: q.ID, Route: q.Route, Request: string(q.Request), NotBefore: max(q.NotBefore.UnixNano(), now), CreatedAt: now}
	if q.NotBefore.IsZero() {
		row.NotBefore = now
	}
	err := s.write(ctx, func(tx dialect.Tx) error {
		pk, err := tx.InsertThread(ctx, dialect.ThreadRow{ID: q.ThreadID, CreatedAt: now, UpdatedAt: now, Metadata: "{}", Status: StatusIdle, Owner: q.Owner, DeleteAfter: deleteAfter(q.Ephemeral, now)})
		if err == nil {
			err = s.checkThreads(ctx, tx, q.Owner)
		}
		if errors.Is(err, dialect.ErrTaken) {
			var l dialect.ThreadLock
			l, err = tx.LockThread(ctx, q.ThreadID)
			if err == nil && q.Owner != "" && l.Owner != q.Owner {
				return fmt.Errorf("thread %q: %w", q.ThreadID, ErrNotFound)
			}
			pk = l.PK
		}
		if err != nil {
			return fmt.Errorf("store: enqueue run %q: %w", q.ID, err)
		}
		row.ThreadPK = pk
		n, err := tx.InsertQueued(ctx, row)
		switch {
		case errors.Is(err, dialect.ErrTaken):
			return fmt.Errorf("run %q: %w", q.ID, ErrExists)
		case err != nil:
			return fmt.Errorf("store: enqueue run %q: %w", q.ID, err)
		case bound > 0 && n > bound:
			return fmt.Errorf("thread %q: %w: it holds %d queued runs, the most it may", q.ThreadID, ErrQueueFull, bound)
		}
		return checkOwned(ctx, tx, dialect.OwnedQueued, q.Owner, s.quota.get().QueuedRuns)
	})
	if err != nil {
		return q, err
	}
	q.NotBefore, q.CreatedAt = fromNanos(row.NotBefore), fromNanos(row.CreatedAt)
	return q, nil
}

// DueRuns returns the queued runs that may start at at: the head of each
// thread's queue whose time has come and whose thread has no running run,
// at most limit after skipping skip. They come in turns by owner, so that
// no user's due runs wait behind another's: first the oldest of each
// owner's, oldest first, then the second oldest of each, and so on.
// threadID, when not empty, keeps to that thread.
func (s *DB) DueRuns(ctx context.Context, threadID string, at time.Time, skip, limit int) ([]QueuedRun, error) {
	rows, err := s.d.DueQueued(ctx, dialect.DueQuery{ThreadID: threadID, At: at.UnixNano(), Skip: max(skip, 0), Limit: max(limit, 1)})
	if err != nil {
		return nil, fmt.Errorf("store: due runs: %w", err)
	}
	return queuedOf(rows), nil
}

// AnyQueued reports whether any thread has a queued run, so that the
// end of a run (see the runner's queue) skips looking for due runs when
// none is queued, as is usual.
func (s *DB) AnyQueued(ctx context.Context) (bool, error) {
	queued, err := s.d.AnyQueued(ctx)
	if err != nil {
		return false, fmt.Errorf("store: any queued run: %w", err)
	}
	return queued, nil
}

// QueuedRuns returns a thread's queue, in the order it is taken.
func (s *DB) QueuedRuns(ctx context.Context, threadID string) ([]QueuedRun, error) {
	rows, err := s.d.QueuedRows(ctx, threadID, true)
	if err != nil {
		return nil, fmt.Errorf("store: queued runs of thread %q: %w", threadID, err)
	}
	return queuedOf(rows), nil
}

// DequeueRun cancels a queued run that has not started: it leaves the
// queue and becomes a run that ended RunCancelled without running. It
// fails with ErrNotFound when the run is not queued (it has started, or
// never was).
func (s *DB) DequeueRun(ctx context.Context, runID string) error {
	return s.endQueued(ctx, runID, RunCancelled, "cancelled before it started")
}

// FailQueued ends a queued run that cannot start (its route is gone, its
// thread waits for a person or belongs to someone else, its input is
// refused): it leaves the queue and becomes a run that ended with
// RunError and errText, with its webhook delivery (see SetQueuedWebhook)
// recorded in the same transaction. It fails with ErrNotFound when the
// run is not queued.
func (s *DB) FailQueued(ctx context.Context, runID, errText string) error {
	return s.endQueued(ctx, runID, RunError, errText)
}

// QueuedWebhook builds the webhook delivery (with its ThreadID) of queued
// run q, which ends without starting with status and errText, from its
// request; nil when the request asked for none.
type QueuedWebhook func(q QueuedRun, status, errText string) *Webhook

// SetQueuedWebhook has every queued run that ends without starting
// (DequeueRun, FailQueued) record the webhook delivery f builds, in the
// transaction that ends it, as a run that ends records its own
// (Finish.Webhook): the store keeps a queued request as its starter wrote
// it, and the starter knows what it holds.
func (s *DB) SetQueuedWebhook(f QueuedWebhook) { s.queuedWebhook.Store(&f) }

// endQueued takes a queued run out of the queue and records it as a run
// that ended with status and errText, with its webhook delivery.
func (s *DB) endQueued(ctx context.Context, runID, status, errText string) error {
	return s.write(ctx, func(tx dialect.Tx) error {
		q, err := tx.DeleteQueued(ctx, runID)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("queued run %q: %w", runID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: end queued run %q: %w", runID, err)
		}
		if err := tx.InsertEndedRun(ctx, dialect.NewRun{ID: runID, ThreadPK: q.ThreadPK, Route: q.Route, Owner: s.own.pk, Now: s.now()}, status, errText); err != nil {
			return err
		}
		return s.queuedDelivery(ctx, tx, q, status, errText)
	})
}

// queuedDelivery records, in tx, the webhook delivery of queued run q
// ending with status and errText, when its request asked for one.
func (s *DB) queuedDelivery(ctx context.Context, tx dialect.WebhookTx, q dialect.QueuedRow, status, errText string) error {
	f := s.queuedWebhook.Load()
	if f == nil {
		return nil
	}
	w := (*f)(QueuedRun{ID: q.ID, Route: q.Route, Request: json.RawMessage(q.Request)}, status, errText)
	if w == nil {
		return nil
	}
	if err := w.check(q.ID); err != nil {
		return err
	}
	if err := tx.InsertWebhook(ctx, s.webhookRow(w, q.ID, w.ThreadID, q.ThreadPK)); err != nil {
		return fmt.Errorf("store: queued run %q: record its webhook: %w", q.ID, err)
	}
	return nil
}

// dequeue takes queued run id out of the queue inside the transaction
// that starts it: ErrNotFound when another process started or a client
// cancelled it meanwhile.
func dequeue(ctx context.Context, tx dialect.QueueTx, id string) error {
	_, err := tx.DeleteQueued(ctx, id)
	if errors.Is(err, dialect.ErrNoRow) {
		return fmt.Errorf("queued run %q: %w", id, ErrNotFound)
	}
	return err
}

// queuedRun reads one queued run, or ErrNotFound.
func (s *DB) queuedRun(ctx context.Context, runID string) (Run, error) {
	rows, err := s.d.QueuedRows(ctx, runID, false)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", runID, err)
	}
	if len(rows) == 0 {
		return Run{}, fmt.Errorf("run %q: %w", runID, ErrNotFound)
	}
	return queuedOf(rows)[0].Run(), nil
}

func queuedOf(rows []dialect.QueuedRow) []QueuedRun {
	out := make([]QueuedRun, len(rows))
	for i, r := range rows {
		out[i] = QueuedRun{ID: r.ID, ThreadID: r.ThreadID, Route: r.Route, Request: json.RawMessage(r.Request),
			NotBefore: fromNanos(r.NotBefore), CreatedAt: fromNanos(r.CreatedAt), Owner: r.Owner}
	}
	return out
}
