package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Run is one run of an agent route on a thread.
type Run struct {
	ID, ThreadID, Route  string
	Status               string
	Error                string
	Output               json.RawMessage // nil until the run finishes with one
	CreatedAt, UpdatedAt time.Time
}

// interruptedText is the error of a run that RecoverInterrupted marks.
const interruptedText = "the server stopped while this run was in flight; its last completed step is kept, start a new run to continue"

// StartRun records r as running on its thread and marks the thread busy, in
// one transaction. It fails with ErrNotFound when the thread does not exist,
// ErrBusy when the thread already has a running run, and ErrExists when the
// run id is taken. r.Status and the times are set by the store.
func (s *Store) StartRun(ctx context.Context, r Run) error {
	if err := checkID("run", r.ID); err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		return s.startInTx(ctx, r, s.now())
	})
}

// startInTx is StartRun's work inside a write transaction.
func (s *Store) startInTx(ctx context.Context, r Run, now int64) error {
	var running, taken bool
	err := s.st.startCheck.QueryRowContext(ctx, r.ThreadID, r.ID).Scan(&running, &taken)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("thread %q: %w", r.ThreadID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	case running:
		return fmt.Errorf("thread %q: %w: wait for it to finish or cancel it", r.ThreadID, ErrBusy)
	case taken:
		return fmt.Errorf("run %q: %w", r.ID, ErrExists)
	}
	if _, err := s.st.insertRun.ExecContext(ctx, r.ID, r.ThreadID, r.Route, now, now); err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	if _, err := s.st.setThread.ExecContext(ctx, StatusBusy, now, r.ThreadID); err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	return nil
}

// BeginRun starts r like StartRun, but creates the thread (idle, no
// metadata) when it does not exist, and returns the thread's latest
// checkpoint, all in one transaction: the three round trips a run needs
// before its first model call become one.
func (s *Store) BeginRun(ctx context.Context, r Run) (Checkpoint, error) {
	if err := checkID("run", r.ID); err != nil {
		return Checkpoint{}, err
	}
	if err := checkID("thread", r.ThreadID); err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	err := s.write(ctx, func(ctx context.Context) error {
		now := s.now()
		res, err := s.st.insertThread.ExecContext(ctx, r.ThreadID, now, now, "{}", StatusIdle)
		if err != nil {
			return fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		created, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		if err := s.startInTx(ctx, r, now); err != nil {
			return err
		}
		if created == 1 {
			cp = Checkpoint{ThreadID: r.ThreadID, Messages: []thread.Message{}, Values: thread.State{}}
			return nil
		}
		cp, err = scanLatest(ctx, s.st.latestW, r.ThreadID)
		return err
	})
	return cp, err
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
func (s *Store) FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error {
	f := Finish{Status: status, Error: errMsg, Output: output}
	out, err := f.check(runID)
	if err != nil {
		return err
	}
	if err := checkEvents(runID, events); err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		var threadID, current string
		err := s.st.runOwner.QueryRowContext(ctx, runID).Scan(&threadID, &current)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		case current != RunRunning:
			return fmt.Errorf("run %q is %s: %w", runID, current, ErrNotRunning)
		}
		if err := insertEvents(ctx, s.st.insertEvent, runID, events); err != nil {
			return err
		}
		return s.finishInTx(ctx, runID, threadID, f, out)
	})
}

// Finish is how a run ends: with SaveStep's Step.Finish, the last step and
// the end of the run are written in one transaction.
type Finish struct {
	// Status is RunSuccess, RunError, RunCancelled or RunInterrupted.
	Status string
	Error  string
	Output json.RawMessage
}

// check validates f and returns the output column's value (nil for NULL).
func (f Finish) check(runID string) (any, error) {
	if _, ok := threadStatusAfter[f.Status]; !ok {
		return nil, fmt.Errorf("run %q: %w: finish status %q is not one of success, error, cancelled, interrupted", runID, ErrInvalid, f.Status)
	}
	if len(f.Output) == 0 {
		return nil, nil
	}
	if !json.Valid(f.Output) {
		return nil, fmt.Errorf("run %q: %w: output is not valid JSON", runID, ErrInvalid)
	}
	return string(f.Output), nil
}

// finishInTx ends a run inside a write transaction the caller checked.
func (s *Store) finishInTx(ctx context.Context, runID, threadID string, f Finish, out any) error {
	now := s.now()
	if _, err := s.st.finishRun.ExecContext(ctx, f.Status, f.Error, out, now, runID); err != nil {
		return fmt.Errorf("store: finish run %q: %w", runID, err)
	}
	if _, err := s.st.setThread.ExecContext(ctx, threadStatusAfter[f.Status], now, threadID); err != nil {
		return fmt.Errorf("store: finish run %q: %w", runID, err)
	}
	return nil
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, runID string) (Run, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, runColumns+` WHERE id = ?`, runID)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", runID, err)
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", runID, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("run %q: %w", runID, ErrNotFound)
	}
	return runs[0], nil
}

// Runs returns the runs of a thread, newest first. It fails with
// ErrNotFound when the thread does not exist.
func (s *Store) Runs(ctx context.Context, threadID string) ([]Run, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, runColumns+` WHERE thread_id = ? ORDER BY created_at DESC, id DESC`, threadID)
	if err != nil {
		return nil, fmt.Errorf("store: runs of thread %q: %w", threadID, err)
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("store: runs of thread %q: %w", threadID, err)
	}
	if len(runs) == 0 {
		if err := s.threadExists(ctx, threadID); err != nil {
			return nil, err
		}
		return []Run{}, nil
	}
	return runs, nil
}

const runColumns = `SELECT id, thread_id, route, status, error, output, created_at, updated_at FROM runs`

func scanRuns(rows *sql.Rows) ([]Run, error) {
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		var out sql.NullString
		var created, updated int64
		if err := rows.Scan(&r.ID, &r.ThreadID, &r.Route, &r.Status, &r.Error, &out, &created, &updated); err != nil {
			return nil, err
		}
		if out.Valid && out.String != "" {
			r.Output = json.RawMessage(out.String)
		}
		r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// threadExists returns nil when the thread exists, an ErrNotFound error when
// it does not. The caller holds lockRead.
func (s *Store) threadExists(ctx context.Context, id string) error {
	var one int
	err := s.rq.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("thread %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: thread %q: %w", id, err)
	}
	return nil
}

// RecoverInterrupted is meant for start-up, before any run starts: every
// run still marked running was cut off by a stop of the server, so it
// becomes RunInterrupted with an error saying so, and its thread becomes
// StatusInterrupted (which accepts new runs). It returns how many runs it
// marked.
func (s *Store) RecoverInterrupted(ctx context.Context) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context) error {
		now := s.now()
		_, err := s.conn.ExecContext(ctx, `UPDATE threads SET status = ?, updated_at = ?
			WHERE id IN (SELECT thread_id FROM runs WHERE status = 'running')`, StatusInterrupted, now)
		if err != nil {
			return err
		}
		res, err := s.conn.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, updated_at = ?
			WHERE status = 'running'`, RunInterrupted, interruptedText, now)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: recover interrupted runs: %w", err)
	}
	return int(n), nil
}
