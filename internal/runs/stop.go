package runs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// Start starts a run. It refuses another user's thread before the runner
// reserves it (the store checks again, on the locked thread, so that a
// thread another user creates meanwhile is never adopted).
func (s *Service) Start(ctx context.Context, req runner.Request) (*runner.Run, error) {
	if err := s.NotOthers(ctx, req.ThreadID); err != nil {
		return nil, err
	}
	return s.m.Start(ctx, req)
}

// Resume starts the run that answers a parked thread's interrupts, on a
// thread ctx may see.
func (s *Service) Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error) {
	if err := s.Visible(ctx, req.ThreadID); err != nil {
		return nil, err
	}
	return s.m.Resume(ctx, req)
}

// Active, Cancel and RemoteRun reach the runs of threads ctx may see: a
// wire that reaches a run before it reads the thread (such as LangGraph's
// multitask_strategy "interrupt") cannot stop another user's.

// Active is the run in flight on a thread on this replica, or nil.
func (s *Service) Active(ctx context.Context, threadID string) *runner.Run {
	if s.Visible(ctx, threadID) != nil {
		return nil
	}
	return s.m.Active(threadID)
}

// Cancel stops the run in flight on a thread on this replica; reached is
// false when it was already ending.
func (s *Service) Cancel(ctx context.Context, threadID string) (run *runner.Run, reached bool) {
	if s.Visible(ctx, threadID) != nil {
		return nil, false
	}
	return s.m.Cancel(threadID)
}

// RemoteRun is the run in flight on a thread on another replica of a
// shared store; ok is false when there is none (or it runs here).
func (s *Service) RemoteRun(ctx context.Context, threadID string) (r store.Run, ok bool) {
	if s.Visible(ctx, threadID) != nil {
		return store.Run{}, false
	}
	return s.m.RemoteRun(ctx, threadID)
}

// StopRemote cancels run r, which runs on another replica: with wait, it
// returns once the store records the run's end; without, at once. A run
// on a thread ctx may not see is not found.
func (s *Service) StopRemote(ctx context.Context, r store.Run, wait bool) error {
	if err := s.Visible(ctx, r.ThreadID); err != nil {
		return runNotFound(r.ID)
	}
	return s.stopRemote(ctx, r, wait, "cancel")
}

// RollbackRun stops run r, here or on another replica, and discards its
// steps; with wait it returns once that is done. reached is false when r
// is not in flight; another user's run is one that does not exist.
func (s *Service) RollbackRun(ctx context.Context, r store.Run, wait bool) (reached bool, err error) {
	if err := s.RunVisible(ctx, r.ID); err != nil {
		return false, err
	}
	if live := s.m.Active(r.ThreadID); live != nil && live.ID == r.ID {
		live.Rollback()
		if wait {
			select {
			case <-live.Done():
			case <-ctx.Done():
				return true, ctx.Err()
			}
		}
		return true, nil
	}
	remote, ok := s.m.RemoteRun(ctx, r.ThreadID)
	if !ok || remote.ID != r.ID {
		return false, nil
	}
	return true, s.stopRemote(ctx, remote, wait, "rollback")
}

// AwaitStart waits until a queued run has started (or ended) and returns
// it as the store has it then; Dequeue cancels a queued run before it
// starts. Both act on another user's run as on one that does not exist.
func (s *Service) AwaitStart(ctx context.Context, runID string) (store.Run, error) {
	if err := s.RunVisible(ctx, runID); err != nil {
		return store.Run{}, err
	}
	return s.m.AwaitStart(ctx, runID)
}

// Dequeue: see AwaitStart.
func (s *Service) Dequeue(ctx context.Context, runID string) error {
	if err := s.RunVisible(ctx, runID); err != nil {
		return err
	}
	return s.m.Dequeue(ctx, runID)
}

// Follow reads the events of a run that may run on another replica from
// the store, after the event with id after, as they commit. It checks no
// owner: read the run with GetRun, which does, first.
func (s *Service) Follow(runID string, after int64) *runner.Follower {
	return s.m.Follow(runID, after)
}

// remoteCancelRetry is how long a stop that does not wait is sent again
// for, while the run still runs.
const remoteCancelRetry = 30 * time.Second

// stopRemote stops run r, which runs on another replica of a shared store:
// the signal action ("cancel", or "rollback" to discard its steps too)
// goes to that replica (the one Dawn's cancel, the LangGraph cancel and
// multitask_strategy "interrupt" all send). With wait it returns once the
// store records the run's end; without, it returns at once and keeps
// sending the signal in the background for a while, in case the run's
// replica was reconnecting its listener.
func (s *Service) stopRemote(ctx context.Context, r store.Run, wait bool, action string) error {
	if wait {
		_, err := s.m.WaitRemote(ctx, r, action)
		return err
	}
	if err := s.m.SignalRemote(ctx, r, action); err != nil {
		return err
	}
	go func() {
		bg, cancel := context.WithTimeout(context.Background(), remoteCancelRetry)
		defer cancel()
		_, _ = s.m.WaitRemote(bg, r, action)
	}()
	return nil
}

// eventSource is what QueuedEvents reads once its run has started: the
// live log's subscription, or the store's follower.
type eventSource interface {
	Next(ctx context.Context) (stream.Event, error)
}

// QueuedEvents are the events of a queued run: Next waits for the run to
// start, then reads its events live when it runs here, or from the store
// when another replica has it. A run cancelled before it started, or
// rolled back, ends with a done event that says it was cancelled.
type QueuedEvents struct {
	s *Service
	r store.Run
	// after is the id of the last event the client has seen.
	after int64
	src   eventSource
}

// QueuedEvents returns the events of queued run r after the event with
// id after.
func (s *Service) QueuedEvents(r store.Run, after int64) *QueuedEvents {
	return &QueuedEvents{s: s, r: r, after: after}
}

// Next returns the next event, waiting as long as ctx allows; io.EOF
// after the last.
func (q *QueuedEvents) Next(ctx context.Context) (stream.Event, error) {
	if q.src == nil {
		live, _, err := q.s.AwaitQueued(ctx, q.r)
		switch {
		case errors.Is(err, store.ErrNotFound):
			// Cancelled before it started, or rolled back.
			return stream.Event{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"cancelled":true}}`)}, nil
		case err != nil:
			return stream.Event{}, err
		case live != nil:
			q.src = live.Log.Subscribe(q.after)
		default:
			q.src = q.s.m.Follow(q.r.ID, q.after)
		}
	}
	return q.src.Next(ctx)
}
