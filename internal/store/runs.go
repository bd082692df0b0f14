package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Run is one run of an agent route on a thread.
type Run struct {
	ID, ThreadID, Route string
	// Checkpoint, when set as a run begins, is the kept checkpoint the run
	// starts from: the thread starts a new branch there (see
	// BeginRunChecked). Runs does not report it.
	Checkpoint           string
	Status               string
	Error                string
	Output               json.RawMessage // nil until the run finishes with one
	CreatedAt, UpdatedAt time.Time
	// Owner, when not "", is the user the run acts for: a thread the run
	// creates belongs to them, and a thread that belongs to anyone else
	// is not theirs to run on (ErrNotFound, as if it did not exist). ""
	// checks nothing and creates a thread that belongs to no user. It is
	// not stored with the run: a run belongs to its thread's owner.
	Owner string
	// Ephemeral, when the run creates its thread, makes the thread
	// ephemeral: any store's SweepThreads deletes it once no run is
	// running or queued on it and its state holds no interrupt a person
	// must answer, also after the server that ran it died. It changes
	// nothing on a thread that exists. It is not stored with the run.
	Ephemeral bool
	// Queued says, to BeginRunChecked, that the run is the queued run of
	// its id, which leaves the queue in the transaction that starts it.
	Queued bool
	// Request is what the run was started with, as its starter encoded
	// it, kept so that another server can continue the run (see
	// ClaimOrphans); nil keeps none. Only ClaimOrphans returns it.
	Request json.RawMessage
	// Metadata is the JSON object the run was started with, nil for
	// none; Runs returns it.
	Metadata json.RawMessage
	// ThreadMetadata, when not nil, is a JSON object whose members
	// BeginRunChecked sets in the thread's metadata as the run begins,
	// keeping the others (as a LangGraph run names its graph and
	// assistant there). Runs does not report it.
	ThreadMetadata json.RawMessage
	// Attrs is a JSON value the run's starter keeps with the run and
	// reads back from any server (a LangGraph run's assistant and
	// options); nil keeps none.
	Attrs json.RawMessage
}

// BeginRunChecked records r as running on its thread and marks the thread
// busy, creating the thread (busy, no metadata) when it does not exist,
// and returns the thread's latest checkpoint, all in one transaction: the
// round trips a run needs before its first model call become one. In the
// same transaction it hands that checkpoint to check (when not nil) before
// it commits. An error from check undoes everything, a thread it would
// have created included, and is returned as it is: the caller decides, on
// the state no other writer can change meanwhile, whether the run may
// start. It fails with ErrBusy when the thread already has a running run,
// ErrExists when the run id is taken, and, for a queued run (r.Queued),
// ErrNotFound when it is no longer queued. With r.Owner set, it fails with
// ErrNotFound when the thread exists and belongs to someone else: the
// check runs on the locked thread, so a thread another user creates
// meanwhile is never adopted.
//
// With r.Checkpoint set to a kept checkpoint other than the latest, the
// thread starts a new branch from it first: that checkpoint's state
// becomes the thread's latest, and the branch it was on stays in the
// history. It fails with ErrNotFound when the thread has no such
// checkpoint. r.Status and the times are set by the store.
func (s *DB) BeginRunChecked(ctx context.Context, r Run, check func(Checkpoint) error) (Checkpoint, error) {
	if err := checkID("run", r.ID); err != nil {
		return Checkpoint{}, err
	}
	if err := checkID("thread", r.ThreadID); err != nil {
		return Checkpoint{}, err
	}
	if len(r.Request) > 0 && !json.Valid(r.Request) {
		return Checkpoint{}, fmt.Errorf("run %q: %w: request is not valid JSON", r.ID, ErrInvalid)
	}
	if len(r.Attrs) > 0 && !json.Valid(r.Attrs) {
		return Checkpoint{}, fmt.Errorf("run %q: %w: attrs are not valid JSON", r.ID, ErrInvalid)
	}
	stamp, err := metadataPatch(r.ThreadMetadata)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("run %q: thread metadata: %w", r.ID, err)
	}
	var cp Checkpoint
	var renewed int64
	err = s.write(ctx, func(tx dialect.Tx) error {
		var err error
		cp, renewed, err = s.begin(ctx, tx, r, stamp)
		if err != nil || check == nil {
			return err
		}
		return check(cp)
	})
	if err == nil && renewed != 0 {
		s.renewed(renewed)
	}
	return cp, err
}

// begin is BeginRunChecked's work inside its transaction, stamp the
// members r sets in the thread's metadata; renewed is when the lease ends
// if the transaction renewed it, else 0.
func (s *DB) begin(ctx context.Context, tx dialect.Tx, r Run, stamp map[string]json.RawMessage) (cp Checkpoint, renewed int64, err error) {
	now := s.now()
	// A new thread is inserted busy, with its run: nothing to read.
	meta, _ := mergeMetadata("{}", stamp)
	threadPK, err := tx.InsertThread(ctx, dialect.ThreadRow{ID: r.ThreadID, CreatedAt: now, UpdatedAt: now, Metadata: meta, Status: StatusBusy, Owner: r.Owner, DeleteAfter: deleteAfter(r.Ephemeral, now)})
	fresh := err == nil
	var l dialect.ThreadLock
	switch {
	case errors.Is(err, dialect.ErrTaken):
		l, err = tx.LockThread(ctx, r.ThreadID)
		if err != nil {
			return cp, 0, fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		if r.Owner != "" && l.Owner != r.Owner {
			return cp, 0, fmt.Errorf("thread %q: %w", r.ThreadID, ErrNotFound)
		}
		if l.Running {
			return cp, 0, busyError(r.ThreadID)
		}
		threadPK = l.PK
	case err != nil:
		return cp, 0, fmt.Errorf("store: begin run %q: %w", r.ID, err)
	default:
		if err := s.checkThreads(ctx, tx, r.Owner); err != nil {
			return cp, 0, err
		}
	}
	if r.Queued {
		if err := dequeue(ctx, tx, r.ID); err != nil {
			return cp, 0, err
		}
	}
	if fresh && r.Checkpoint != "" {
		return cp, 0, checkpointNotFound(r.ThreadID, r.Checkpoint)
	}
	if renewed, err = s.insertRun(ctx, tx, r, threadPK, now); err != nil {
		return cp, 0, err
	}
	if fresh {
		return Checkpoint{ThreadID: r.ThreadID, Messages: []thread.Message{}, Values: thread.State{}}, renewed, nil
	}
	if r.Checkpoint != "" {
		if err := s.fork(ctx, tx, r.ThreadID, l, r.Checkpoint); err != nil {
			return cp, 0, err
		}
	}
	if err := patchMetadata(ctx, tx, threadPK, stamp, now); err != nil {
		return cp, 0, fmt.Errorf("store: begin run %q: %w", r.ID, err)
	}
	if err := tx.SetThreadStatus(ctx, threadPK, StatusBusy, now); err != nil {
		return cp, 0, fmt.Errorf("store: begin run %q: %w", r.ID, err)
	}
	cp, err = latest(ctx, tx, r.ThreadID)
	return cp, renewed, err
}

// deleteAfter is the delete_after of a new thread created at now: now for
// an ephemeral one (the sweep looks at it from the start), else 0.
func deleteAfter(ephemeral bool, now int64) int64 {
	if ephemeral {
		return now
	}
	return 0
}

// insertRun inserts r, running and owned by this store.
func (s *DB) insertRun(ctx context.Context, tx dialect.Tx, r Run, threadPK, now int64) (renewed int64, err error) {
	owner, renewed, err := s.ownerOfNewRun(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	err = tx.InsertRun(ctx, dialect.NewRun{ID: r.ID, ThreadPK: threadPK, Route: r.Route, Owner: owner, Now: now, Request: string(r.Request), Metadata: string(r.Metadata), Attrs: string(r.Attrs)})
	switch {
	case errors.Is(err, dialect.ErrRunning):
		return 0, busyError(r.ThreadID)
	case errors.Is(err, dialect.ErrTaken):
		return 0, fmt.Errorf("run %q: %w", r.ID, ErrExists)
	case err != nil:
		return 0, fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	return renewed, nil
}

// takenOver is the error of a write to a run that another store claimed
// (ClaimOrphans) when this one's lease had expired: this store no longer
// runs it.
func takenOver(runID string) error {
	return fmt.Errorf("run %q: %w: another server took it over when this server's lease expired", runID, ErrNotRunning)
}

func busyError(threadID string) error {
	return fmt.Errorf("thread %q: %w: wait for it to finish or cancel it", threadID, ErrBusy)
}

// threadStatusAfter is the thread status a run leaves behind. Every one of
// them accepts a new run.
var threadStatusAfter = map[string]string{
	RunSuccess:     StatusIdle,
	RunCancelled:   StatusIdle,
	RunError:       StatusError,
	RunInterrupted: StatusInterrupted,
}

// FinishRun ends a running run with status (RunSuccess, RunError,
// RunCancelled or RunInterrupted), its error text and output, appends its
// last events, and frees its thread, in one transaction. The thread becomes
// idle, or "error" after RunError and "interrupted" after RunInterrupted;
// either way it accepts new runs. It fails with ErrNotFound for an unknown
// run and ErrNotRunning for a run that has already finished.
func (s *DB) FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error {
	return s.EndRun(ctx, runID, Finish{Status: status, Error: errMsg, Output: output}, events)
}

// EndRun is FinishRun with the end in f, which may carry the run's
// webhook delivery (Finish.Webhook): it lands in the outbox in the same
// transaction.
func (s *DB) EndRun(ctx context.Context, runID string, f Finish, events []stream.Event) error {
	out, err := f.check(runID)
	if err != nil {
		return err
	}
	if err := checkEvents(runID, events); err != nil {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockRun(ctx, runID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		case l.Status != RunRunning:
			return fmt.Errorf("run %q is %s: %w", runID, l.Status, ErrNotRunning)
		case l.Owner != s.own.pk:
			return takenOver(runID)
		}
		now := s.now()
		if err := s.insertEvents(ctx, tx, l.ThreadPK, l.PK, events); err != nil {
			return fmt.Errorf("store: run %q: events: %w", runID, err)
		}
		if err := tx.FinishRun(ctx, l.PK, f.Status, f.Error, out, now); err != nil {
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		}
		if err := tx.SetThreadStatus(ctx, l.ThreadPK, threadStatusAfter[f.Status], now); err != nil {
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		}
		if f.Webhook != nil {
			if err := s.insertWebhook(ctx, tx, f.Webhook, l, runID); err != nil {
				return err
			}
		}
		return tx.RunChanged(ctx, runID)
	})
}

// Finish is how a run ends: with SaveStep's Step.Finish, the last step and
// the end of the run are written in one transaction.
type Finish struct {
	// Status is RunSuccess, RunError, RunCancelled or RunInterrupted.
	Status string
	Error  string
	Output json.RawMessage
	// Webhook, when not nil, is the run's webhook delivery (URL, Payload
	// and MaxAttempts; the rest is the store's), recorded in the outbox
	// with the end of the run, due at once.
	Webhook *Webhook
}

// check validates f and returns the output column's value (nil for NULL).
func (f Finish) check(runID string) ([]byte, error) {
	if _, ok := threadStatusAfter[f.Status]; !ok {
		return nil, fmt.Errorf("run %q: %w: finish status %q is not one of success, error, cancelled, interrupted", runID, ErrInvalid, f.Status)
	}
	if f.Webhook != nil {
		if err := f.Webhook.check(runID); err != nil {
			return nil, err
		}
	}
	if len(f.Output) == 0 {
		return nil, nil
	}
	if !json.Valid(f.Output) {
		return nil, fmt.Errorf("run %q: %w: output is not valid JSON", runID, ErrInvalid)
	}
	return f.Output, nil
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *DB) GetRun(ctx context.Context, runID string) (Run, error) {
	r, err := s.startedRun(ctx, runID)
	if !errors.Is(err, ErrNotFound) {
		return r, err
	}
	r, err = s.queuedRun(ctx, runID)
	if !errors.Is(err, ErrNotFound) {
		return r, err
	}
	// A queued run leaves the queue in the transaction that starts it:
	// one that started between the two reads was in neither, and is in
	// the runs now.
	return s.startedRun(ctx, runID)
}

// startedRun reads run runID from the runs (not the queue).
func (s *DB) startedRun(ctx context.Context, runID string) (Run, error) {
	rows, err := s.d.Runs(ctx, runID, false)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", runID, err)
	}
	if len(rows) == 0 {
		return Run{}, fmt.Errorf("run %q: %w", runID, ErrNotFound)
	}
	return runOf(rows[0]), nil
}

// Runs returns the runs of a thread, newest first: its queued runs
// (RunPending, the last to start first), then the others. It fails with
// ErrNotFound when the thread does not exist.
func (s *DB) Runs(ctx context.Context, threadID string) ([]Run, error) {
	queued, err := s.QueuedRuns(ctx, threadID)
	if err != nil {
		return nil, err
	}
	rows, err := s.d.Runs(ctx, threadID, true)
	if err != nil {
		return nil, fmt.Errorf("store: runs of thread %q: %w", threadID, err)
	}
	if len(rows) == 0 && len(queued) == 0 {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
	}
	started := make(map[string]bool, len(rows))
	for _, r := range rows {
		started[r.ID] = true
	}
	runs := make([]Run, 0, len(queued)+len(rows))
	for i := len(queued) - 1; i >= 0; i-- {
		if !started[queued[i].ID] { // it started between the two reads
			runs = append(runs, queued[i].Run())
		}
	}
	for _, r := range rows {
		runs = append(runs, runOf(r))
	}
	return runs, nil
}

// runOf turns a stored run into a Run.
func runOf(r dialect.RunRow) Run {
	run := Run{ID: r.ID, ThreadID: r.ThreadID, Route: r.Route, Status: r.Status, Error: r.Error,
		CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt)}
	if len(r.Output) > 0 {
		run.Output = json.RawMessage(r.Output)
	}
	if len(r.Metadata) > 0 {
		run.Metadata = json.RawMessage(r.Metadata)
	}
	if len(r.Attrs) > 0 {
		run.Attrs = json.RawMessage(r.Attrs)
	}
	return run
}
