package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// Ownership: the service's reads of threads, runs, crons and items take
// the request's context and answer a thread the caller may not see
// (ownership.Sees) exactly as a thread that does not exist. A context
// without an identity (a server without authentication) and the service
// credential see every thread, and pay no extra read.

// MissingThread is the store's answer for a thread that does not exist,
// word for word, so that another user's thread and no thread read the
// same.
func MissingThread(id string) error { return fmt.Errorf("thread %q: %w", id, store.ErrNotFound) }

// runNotFound is the store's answer for a missing run.
func runNotFound(id string) error { return fmt.Errorf("run %q: %w", id, store.ErrNotFound) }

// GetThread is the store's, with another user's thread not found.
func (s *Service) GetThread(ctx context.Context, id string) (store.Thread, error) {
	t, err := s.threads.GetThread(ctx, id)
	if err == nil && !ownership.Sees(ctx, t.Owner) {
		return store.Thread{}, MissingThread(id)
	}
	return t, err
}

// Visible returns nil when ctx may see thread id, the not-found answer
// when it may not or the thread does not exist; an unscoped ctx reads
// nothing.
func (s *Service) Visible(ctx context.Context, id string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	_, err := s.GetThread(ctx, id)
	return err
}

// NotOthers returns nil when thread id is ctx's or does not exist (a run
// creates it), the not-found answer when it is another user's.
func (s *Service) NotOthers(ctx context.Context, id string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	t, err := s.threads.GetThread(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case !ownership.Sees(ctx, t.Owner):
		return MissingThread(id)
	}
	return nil
}

// CreateThread creates a thread that belongs to ctx's user.
func (s *Service) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (store.Thread, error) {
	return s.CreateThreadTTL(ctx, id, metadata, 0)
}

// CreateThreadTTL is CreateThread for a thread that expires ttl after its
// last update (0: never).
func (s *Service) CreateThreadTTL(ctx context.Context, id string, metadata json.RawMessage, ttl time.Duration) (store.Thread, error) {
	owner, _ := ownership.Owner(ctx)
	return s.threads.CreateOwnedThreadTTL(ctx, owner, id, metadata, ttl)
}

// DeleteThread deletes a thread ctx may see, with what the runner keeps
// of it; a thread with a run in flight here is runner.ErrBusy.
func (s *Service) DeleteThread(ctx context.Context, id string) error {
	if err := s.Visible(ctx, id); err != nil {
		return err
	}
	return s.m.DeleteThread(ctx, id)
}

// Latest is a thread's latest saved state.
func (s *Service) Latest(ctx context.Context, threadID string) (store.Checkpoint, error) {
	if err := s.Visible(ctx, threadID); err != nil {
		return store.Checkpoint{}, err
	}
	return s.history.Latest(ctx, threadID)
}

// Runs are a thread's runs, newest first.
func (s *Service) Runs(ctx context.Context, threadID string) ([]store.Run, error) {
	if err := s.Visible(ctx, threadID); err != nil {
		return nil, err
	}
	return s.runs.Runs(ctx, threadID)
}

// FinishedRuns lists a thread's successful runs.
func (s *Service) FinishedRuns(ctx context.Context, q store.FinishedQuery) ([]store.FinishedRun, error) {
	if err := s.Visible(ctx, q.ThreadID); err != nil {
		return nil, err
	}
	return s.runs.FinishedRuns(ctx, q)
}

// GetRun is the store's, with a run on another user's thread not found.
func (s *Service) GetRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := s.runs.GetRun(ctx, runID)
	if err == nil && s.Visible(ctx, r.ThreadID) != nil {
		return store.Run{}, runNotFound(runID)
	}
	return r, err
}

// RunVisible returns nil when ctx may see run runID.
func (s *Service) RunVisible(ctx context.Context, runID string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	_, err := s.GetRun(ctx, runID)
	return err
}

// Events are a run's saved events after the one with id after.
func (s *Service) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	if err := s.RunVisible(ctx, runID); err != nil {
		return nil, err
	}
	return s.history.Events(ctx, runID, after)
}

// EventsPage is Events with at most limit events.
func (s *Service) EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error) {
	if err := s.RunVisible(ctx, runID); err != nil {
		return nil, err
	}
	return s.history.EventsPage(ctx, runID, after, limit)
}

// SearchThreads and CountThreads filter by the caller's user in the
// database: no page or count holds another user's thread.
func (s *Service) SearchThreads(ctx context.Context, q store.ThreadQuery) ([]store.Thread, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return s.threads.SearchThreads(ctx, q)
}

// CountThreads: see SearchThreads.
func (s *Service) CountThreads(ctx context.Context, q store.ThreadQuery) (int, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return s.threads.CountThreads(ctx, q)
}

// History, CheckpointAt, UpdateState, PatchThreadMetadata, SetThreadTTL
// and CopyThread read or change a thread's checkpoints and metadata:
// another user's thread is not found.

// History reads a thread's kept checkpoints.
func (s *Service) History(ctx context.Context, threadID string, q store.HistoryQuery) ([]store.Checkpoint, error) {
	if err := s.Visible(ctx, threadID); err != nil {
		return nil, err
	}
	return s.history.History(ctx, threadID, q)
}

// CheckpointAt reads one of a thread's kept checkpoints.
func (s *Service) CheckpointAt(ctx context.Context, threadID, id string) (store.Checkpoint, error) {
	if err := s.Visible(ctx, threadID); err != nil {
		return store.Checkpoint{}, err
	}
	return s.history.CheckpointAt(ctx, threadID, id)
}

// UpdateState keeps a new checkpoint outside any run.
func (s *Service) UpdateState(ctx context.Context, u store.StateUpdate) (store.Checkpoint, error) {
	if err := s.Visible(ctx, u.ThreadID); err != nil {
		return store.Checkpoint{}, err
	}
	return s.history.UpdateState(ctx, u)
}

// PatchThreadMetadata merges patch into a thread's metadata.
func (s *Service) PatchThreadMetadata(ctx context.Context, id string, patch json.RawMessage) (store.Thread, error) {
	if err := s.Visible(ctx, id); err != nil {
		return store.Thread{}, err
	}
	return s.threads.PatchThreadMetadata(ctx, id, patch)
}

// SetThreadTTL gives a thread ctx may see a new ttl.
func (s *Service) SetThreadTTL(ctx context.Context, id string, ttl time.Duration) (store.Thread, error) {
	if err := s.Visible(ctx, id); err != nil {
		return store.Thread{}, err
	}
	return s.threads.SetThreadTTL(ctx, id, ttl)
}

// CopyThread copies a thread ctx may see; the copy keeps the thread's
// owner, so it is the caller's own.
func (s *Service) CopyThread(ctx context.Context, fromID, toID string) (store.Thread, error) {
	if err := s.Visible(ctx, fromID); err != nil {
		return store.Thread{}, err
	}
	return s.threads.CopyThread(ctx, fromID, toID)
}
