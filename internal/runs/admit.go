package runs

import (
	"context"
	"errors"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
)

// Multitask strategies: what a run request does when its thread has a
// run in flight (multitask_strategy on every wire).
const (
	// Reject refuses the new run: the thread is busy.
	Reject = "reject"
	// Interrupt cancels the run in flight, keeping the steps it saved,
	// and starts the new one.
	Interrupt = "interrupt"
	// Rollback cancels the run in flight, discards its steps and deletes
	// it, and starts the new one.
	Rollback = "rollback"
	// Enqueue queues the new run, durably, to start when the thread is
	// free.
	Enqueue = "enqueue"
)

// ValidStrategy reports whether name is one of the multitask strategies.
func ValidStrategy(name string) bool {
	switch name {
	case Reject, Interrupt, Rollback, Enqueue:
		return true
	}
	return false
}

// Admission is how a run request is admitted on its thread.
type Admission struct {
	// Strategy is the multitask strategy; "" is Reject.
	Strategy string
	// At, when not zero, is the time a delayed run may start: the run
	// is queued.
	At time.Time
	// Ready, when set, is called right before the run is started or
	// queued, once its thread is cleared (interrupt, rollback), and again
	// after each clearing: a wire reads there what the run starts from,
	// which the clearing may have rolled back.
	Ready func()
}

// ready calls a.Ready, if set.
func (a Admission) ready() {
	if a.Ready != nil {
		a.Ready()
	}
}

// Admit starts req on its thread as a.Strategy says, or queues it: with a
// delay (a.At not zero) the run is always queued, and with enqueue it is
// queued when the thread has a run in flight or runs waiting, or the
// server has as many runs in flight as --max-runs allows. It returns
// the run started here, or the queued run (pending). Another user's
// thread is not found, whatever the strategy: it is neither queued on,
// interrupted nor rolled back.
func (s *Service) Admit(ctx context.Context, req runner.Request, a Admission) (*runner.Run, store.Run, error) {
	if err := s.NotOthers(ctx, req.ThreadID); err != nil {
		return nil, store.Run{}, err
	}
	switch a.Strategy {
	case Enqueue:
		a.ready()
		if !a.At.IsZero() {
			break
		}
		if s.queueEmpty(ctx, req.ThreadID) {
			// The thread busy, or the server at --max-runs: the run waits.
			run, err := s.m.Start(ctx, req)
			if !errors.Is(err, runner.ErrBusy) && !errors.Is(err, runner.ErrOverloaded) {
				return run, store.Run{}, err
			}
		}
	case Interrupt, Rollback:
		if a.At.IsZero() {
			run, err := s.startClearing(ctx, req, a)
			return run, store.Run{}, err
		}
		if err := s.clearThread(ctx, req.ThreadID, a.Strategy == Rollback); err != nil {
			return nil, store.Run{}, err
		}
		a.ready()
	default:
		a.ready()
	}
	if a.Strategy == Enqueue || !a.At.IsZero() {
		q, err := s.m.Enqueue(ctx, req, a.At)
		return nil, q, err
	}
	run, err := s.m.Start(ctx, req)
	return run, store.Run{}, err
}

// startClearing clears the thread, then starts req on it. Another request
// that interrupts the same thread may start its run between the two; that
// run is cleared in turn, as interrupt says, so that of several sent at
// once the last to start is the one left running and none is refused
// as busy (unless MaxClears rounds are lost). This loop is the only one:
// every wire admits through Admit.
func (s *Service) startClearing(ctx context.Context, req runner.Request, a Admission) (*runner.Run, error) {
	for round := 1; ; round++ {
		if err := s.clearThread(ctx, req.ThreadID, a.Strategy == Rollback); err != nil {
			return nil, err
		}
		a.ready()
		run, err := s.m.Start(ctx, req)
		if !Busy(err) || round == MaxClears {
			return run, err
		}
	}
}

// queueEmpty reports whether threadID has no queued run; a store that
// cannot say counts as not empty, so the run is queued rather than
// jumping the queue.
func (s *Service) queueEmpty(ctx context.Context, threadID string) bool {
	if queued, err := s.queue.AnyQueued(ctx); err == nil && !queued {
		return true
	}
	waiting, err := s.queue.QueuedRuns(ctx, threadID)
	return err == nil && len(waiting) == 0
}

// ClearThread makes way for a run that interrupts (or, with rollback,
// rolls back) a thread's run: its queued runs are cancelled, then its
// run in flight, here or on another replica, is stopped, and ClearThread
// returns once the store has recorded its end. Another user's thread is
// not found.
func (s *Service) ClearThread(ctx context.Context, threadID string, rollback bool) error {
	if err := s.Visible(ctx, threadID); err != nil {
		return err
	}
	return s.clearThread(ctx, threadID, rollback)
}

func (s *Service) clearThread(ctx context.Context, threadID string, rollback bool) error {
	waiting, err := s.queue.QueuedRuns(ctx, threadID)
	if err != nil {
		return err
	}
	for _, q := range waiting {
		if err := s.m.Dequeue(ctx, q.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return s.stopInFlight(ctx, threadID, rollback)
}

// stopInFlight stops the run in flight on a thread, here or on another
// replica of a shared store, and waits for its end: cancelled, or rolled
// back with rollback.
func (s *Service) stopInFlight(ctx context.Context, threadID string, rollback bool) error {
	stop, action := s.m.Cancel, "cancel"
	if rollback {
		stop, action = s.m.Rollback, "rollback"
	}
	if active, _ := stop(threadID); active != nil {
		select {
		case <-active.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if remote, ok := s.m.RemoteRun(ctx, threadID); ok {
		_, err := s.m.WaitRemote(ctx, remote, action)
		return err
	}
	return nil
}

// AwaitQueued waits until queued run r has started and returns it live
// when it runs here, or nil when another replica has it (or it has
// already ended); now is how the store has it then. It checks no owner:
// r was read through the service, which did.
func (s *Service) AwaitQueued(ctx context.Context, r store.Run) (live *runner.Run, now store.Run, err error) {
	now, err = s.m.AwaitStart(ctx, r.ID)
	if err != nil {
		return nil, now, err
	}
	if run := s.m.Active(r.ThreadID); run != nil && run.ID == r.ID {
		return run, now, nil
	}
	return nil, now, nil
}
