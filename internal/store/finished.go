package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
)

// FinishedRun is a run that ended successfully, with the data of its done
// event, which holds the thread's state as the run left it.
type FinishedRun struct {
	ID, ThreadID, Route  string
	CreatedAt, UpdatedAt time.Time
	// Done is the data of the run's done event, {"output": ...}, when the
	// query asked for it.
	Done json.RawMessage
}

// FinishedQuery selects a thread's successful runs for FinishedRuns.
type FinishedQuery struct {
	ThreadID string
	// RunID keeps only that run.
	RunID string
	// Before keeps only runs created before that run of the thread.
	Before string
	// Limit bounds the runs returned; 0 means no bound.
	Limit int
	// Done asks for each run's done event, which holds the whole state;
	// without it only the runs are read.
	Done bool
}

// FinishedRuns returns a thread's successful runs, newest first, with
// their done event if asked: the states the thread has been in between
// runs. A plan preview, which changed no state, is not one of them. It
// fails with ErrNotFound when the thread does not exist.
func (s *DB) FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error) {
	f := dialect.FinishedFilter{ThreadID: q.ThreadID, RunID: q.RunID, Before: q.Before, Limit: q.Limit, Done: q.Done,
		DoneType: stream.TypeDone, Success: RunSuccess}
	out := []FinishedRun{}
	var u unpacker
	err := s.d.FinishedRuns(ctx, f, func(r dialect.FinishedRow) error {
		done, err := u.unpack(r.Codec, r.Data)
		if err != nil {
			return fmt.Errorf("done event of run %q: %w", r.ID, err)
		}
		out = append(out, FinishedRun{ID: r.ID, ThreadID: q.ThreadID, Route: r.Route,
			CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt), Done: done})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
	}
	if len(out) == 0 {
		if err := s.threadExists(ctx, q.ThreadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}
