package langgraph

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
)

// This file starts a LangGraph run: admission through the runs service,
// and what the run starts from.

// startLG starts a LangGraph run on its thread: it applies if_not_exists,
// the checkpoint to continue from, multitask_strategy and after_seconds,
// then starts the run, or queues it, and remembers it. It returns the run
// started here, or else the queued run (pending).
func (s *dialect) startLG(ctx context.Context, run *lgRun, req runner.Request, body lgRunBody) (*runner.Run, store.Run, error) {
	fail := func(err error) (*runner.Run, store.Run, error) { return nil, store.Run{}, err }
	if err := wire.CheckThreadID(run.ThreadID); err != nil {
		return fail(err)
	}
	_, err := s.host.GetThread(ctx, run.ThreadID)
	if errors.Is(err, store.ErrNotFound) && run.resume != nil && body.IfNotExists == "create" {
		// A thread yet to be created has no interrupt to answer: it is
		// not created.
		return fail(wire.NewError(http.StatusConflict, "no_interrupt_pending", "thread "+run.ThreadID+" does not exist, so no interrupt is pending on it: command.resume answers the interrupts of a thread whose run parked"))
	}
	if errors.Is(err, store.ErrNotFound) {
		if body.IfNotExists != "create" {
			return fail(noThread(run.ThreadID))
		}
	} else if err != nil {
		return fail(err)
	}
	if err := s.commandUpdate(ctx, run, &req, body); err != nil {
		return fail(err)
	}
	if err := s.inputByID(ctx, run, &req); err != nil {
		return fail(err)
	}
	if err := s.continuePaused(ctx, run, body); err != nil {
		return fail(err)
	}
	if run.resume != nil {
		// A parked thread has no run in flight to cancel.
		started, err := s.startResume(ctx, run, req)
		if err != nil {
			return fail(err)
		}
		return s.remember(run, started), store.Run{}, nil
	}
	at, err := wire.NotBefore(body.AfterSeconds, time.Now())
	if err != nil {
		return fail(err)
	}
	started, queued, err := s.admitLG(ctx, run, req, at)
	switch {
	case err != nil && req.Checkpoint != "" && errors.Is(err, store.ErrNotFound):
		return fail(updateError(run.ThreadID, req.Checkpoint, err))
	case err != nil:
		return fail(lgPending(err))
	case started == nil:
		// Read when it starts: the thread moves on meanwhile.
		run.start = nil
		run.RunID = queued.ID
		kept := *run
		kept.resume = nil
		s.known.put(&kept)
		return nil, queued, nil
	}
	if req.Checkpoint != "" {
		// The run's messages go to the branch its start made.
		if cp, err := s.host.Latest(ctx, run.ThreadID); err == nil {
			run.start.Names.branch = cp.Branch
		}
	}
	return s.remember(run, started), store.Run{}, nil
}

// admitLG starts run, or queues it, as its multitask_strategy says,
// through the runs service. What the run starts from is read right
// before it starts (after, its first step may already be saved), and,
// with interrupt and rollback, after the thread is cleared, which may
// roll it back (runs.Admission's Ready).
func (s *dialect) admitLG(ctx context.Context, run *lgRun, req runner.Request, at time.Time) (*runner.Run, store.Run, error) {
	return s.host.Admit(ctx, req, runs.Admission{Strategy: run.Multitask, At: at, Ready: func() {
		run.start = s.threadStart(ctx, run.ThreadID, run.RouteID, req)
	}})
}

// awaitLG waits until queued run r has started and returns it live when
// it runs here, or nil when another replica has it or it has ended; now
// is how the store has it then.
func (s *dialect) awaitLG(ctx context.Context, r store.Run) (live *runner.Run, now store.Run, err error) {
	now, err = s.host.AwaitStart(ctx, r.ID)
	if err != nil {
		return nil, now, err
	}
	if run := s.host.Active(ctx, r.ThreadID); run != nil && run.ID == r.ID {
		return run, now, nil
	}
	return nil, now, nil
}

// remember keeps what the calls that later name a started run need.
func (s *dialect) remember(run *lgRun, started *runner.Run) *runner.Run {
	run.RunID = started.ID
	kept := *run
	kept.start, kept.resume = nil, nil
	s.known.put(&kept)
	return started
}

// lgStart is what a run starts from: the thread's messages with the run's
// input, and its state fields.
type lgStart struct {
	Prefix []thread.Message
	Fields thread.State
	Names  messageNames
	// Step is the thread's highest step then, which the run's first
	// follows; From the checkpoint the run starts from ("" for none).
	Step int
	From string
}

// threadStart reads what a run of req on a thread would start from now:
// the route's initial state under the thread's values and the input's.
func (s *dialect) threadStart(ctx context.Context, threadID, routeID string, req runner.Request) *lgStart {
	start := &lgStart{Fields: thread.State{}}
	if p, ok := s.host.App().Routes[routeID]; ok {
		start.Fields = p.InitialState()
	}
	cp, err := s.host.Latest(ctx, threadID)
	start.Step, start.From = cp.Step, cmpOr(req.Checkpoint, cp.ID)
	if req.Checkpoint != "" && req.Checkpoint != cp.ID {
		cp, err = s.host.CheckpointAt(ctx, threadID, req.Checkpoint)
	}
	if err == nil {
		start.Prefix, start.Names = cp.Messages, namesOf(cp)
		for k, v := range cp.Values {
			start.Fields[k] = v
		}
	}
	for k, v := range req.Values {
		start.Fields[k] = v
	}
	start.Prefix = append(start.Prefix[:len(start.Prefix):len(start.Prefix)], req.Messages...)
	return start
}
