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
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
func (s *SQLite) StartRun(ctx context.Context, r Run) error {
	if err := checkID("run", r.ID); err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		return s.startInTx(ctx, r, s.now())
	})
}

// startInTx is StartRun's work inside a write transaction.
func (s *SQLite) startInTx(ctx context.Context, r Run, now int64) error {
	var threadPK int64
	var running, taken bool
	err := s.st.startCheck.QueryRowContext(ctx, r.ThreadID, r.ID).Scan(&threadPK, &running, &taken)
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
	if err := s.insertRun(ctx, r, threadPK, now); err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	if _, err := s.st.setThread.ExecContext(ctx, StatusBusy, now, threadPK); err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	return nil
}

// BeginRun starts r like StartRun, but creates the thread (idle, no
// metadata) when it does not exist, and returns the thread's latest
// checkpoint, all in one transaction: the three round trips a run needs
// before its first model call become one.
func (s *SQLite) BeginRun(ctx context.Context, r Run) (Checkpoint, error) {
	return s.BeginRunChecked(ctx, r, nil)
}

// BeginRunChecked is BeginRun that, in the same transaction, hands the
// thread's latest checkpoint to check (when not nil) before it commits. An
// error from check undoes everything, a thread it would have created
// included, and is returned as it is: the caller decides, on the state no
// other writer can change meanwhile, whether the run may start.
func (s *SQLite) BeginRunChecked(ctx context.Context, r Run, check func(Checkpoint) error) (Checkpoint, error) {
	if err := checkID("run", r.ID); err != nil {
		return Checkpoint{}, err
	}
	if err := checkID("thread", r.ThreadID); err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	err := s.write(ctx, func(ctx context.Context) error {
		now := s.now()
		// A new thread is inserted busy, with its run: nothing to check.
		threadPK, err := s.insertThread(ctx, r.ThreadID, now, "{}", StatusBusy)
		switch {
		case errors.Is(err, errThreadExists):
			if err := s.startInTx(ctx, r, now); err != nil {
				return err
			}
			if cp, err = scanLatest(ctx, s.st.latestW, r.ThreadID); err != nil || check == nil {
				return err
			}
			return check(cp)
		case err != nil:
			return fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		if err := s.insertRun(ctx, r, threadPK, now); err != nil {
			if isUniqueViolation(err) { // the thread is new, so only the run id can clash
				return fmt.Errorf("run %q: %w", r.ID, ErrExists)
			}
			return fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		cp = Checkpoint{ThreadID: r.ThreadID, Messages: []thread.Message{}, Values: thread.State{}}
		if check != nil {
			return check(cp)
		}
		return nil
	})
	return cp, err
}

// isUniqueViolation reports whether err is SQLite refusing a row that
// breaks a UNIQUE index.
func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
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
func (s *SQLite) FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error {
	f := Finish{Status: status, Error: errMsg, Output: output}
	out, err := f.check(runID)
	if err != nil {
		return err
	}
	if err := checkEvents(runID, events); err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		var runPK, threadPK int64
		var current string
		err := s.st.runOwner.QueryRowContext(ctx, runID).Scan(&runPK, &threadPK, &current)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		case current != RunRunning:
			return fmt.Errorf("run %q is %s: %w", runID, current, ErrNotRunning)
		}
		if err := s.insertEvents(ctx, runID, threadPK, runPK, events); err != nil {
			return err
		}
		now := s.now()
		if err := s.finishInTx(ctx, runID, runPK, f, out, now); err != nil {
			return err
		}
		if _, err := s.st.setThread.ExecContext(ctx, threadStatusAfter[f.Status], now, threadPK); err != nil {
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		}
		return nil
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

// finishInTx records the end of a run inside a write transaction the
// caller checked; the caller sets the thread's status.
func (s *SQLite) finishInTx(ctx context.Context, runID string, runPK int64, f Finish, out any, now int64) error {
	if _, err := s.st.finishRun.ExecContext(ctx, f.Status, f.Error, out, now, runPK); err != nil {
		return fmt.Errorf("store: finish run %q: %w", runID, err)
	}
	return nil
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *SQLite) GetRun(ctx context.Context, runID string) (Run, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, runColumns+` WHERE r.id = ?`, runID)
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
func (s *SQLite) Runs(ctx context.Context, threadID string) ([]Run, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, runColumns+` WHERE t.id = ? ORDER BY r.created_at DESC, r.id DESC`, threadID)
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

const runColumns = `SELECT r.id, t.id, r.route, r.status, r.error, r.output, r.created_at, r.updated_at
	FROM runs r JOIN threads t ON t.pk = r.thread`

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
func (s *SQLite) threadExists(ctx context.Context, id string) error {
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

// recoverThreads and recoverRuns are RecoverInterrupted's statements: they
// take the running runs whose owner has no row. Both find the running runs
// through the runs_running index, which holds only those, and each owner
// by its pk, so recovery takes as long as there are runs running, whatever
// the size of the store.
const (
	recoverThreads = `UPDATE threads SET status = ?, updated_at = ?
		WHERE pk IN (SELECT thread FROM runs r WHERE status = 'running'
			AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner))`
	recoverRuns = `UPDATE runs SET status = ?, error = ?, updated_at = ? WHERE status = 'running'
		AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = runs.owner)`
)

// RecoverInterrupted marks the runs of owners that are gone: every run
// still marked running whose store was closed, or whose process is known
// to have ended, or whose owner's lease has expired, was cut off, so it
// becomes RunInterrupted with an error saying so, and its thread becomes
// StatusInterrupted (which accepts new runs). The runs of live owners,
// this store included, are left alone, so it is safe to call at any time
// and from any number of processes sharing the database: at start-up, and
// now and then to take over the runs of an owner that died. It returns
// how many runs it marked.
func (s *SQLite) RecoverInterrupted(ctx context.Context) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context) error {
		if err := s.dropGoneOwners(ctx); err != nil {
			return err
		}
		now := s.now()
		_, err := s.conn.ExecContext(ctx, recoverThreads, StatusInterrupted, now)
		if err != nil {
			return err
		}
		res, err := s.conn.ExecContext(ctx, recoverRuns, RunInterrupted, interruptedText, now)
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
