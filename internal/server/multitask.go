package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// Multitask strategies: what a run request does when its thread has a
// run in flight (multitask_strategy on both wires).
const (
	// MultitaskReject refuses the new run: 409 run_in_flight.
	MultitaskReject = "reject"
	// MultitaskInterrupt cancels the run in flight, keeping the steps it
	// saved, and starts the new one.
	MultitaskInterrupt = "interrupt"
	// MultitaskRollback cancels the run in flight, discards its steps and
	// deletes it, and starts the new one.
	MultitaskRollback = "rollback"
	// MultitaskEnqueue queues the new run, durably, to start when the
	// thread is free.
	MultitaskEnqueue = "enqueue"
)

// checkMultitask checks a multitask_strategy value; "" is def.
func checkMultitask(value, def string) (string, error) {
	switch value {
	case "":
		return def, nil
	case MultitaskReject, MultitaskInterrupt, MultitaskRollback, MultitaskEnqueue:
		return value, nil
	}
	return "", newError(http.StatusBadRequest, "invalid_body", "multitask_strategy must be one of reject, interrupt, rollback, enqueue, not "+strconv.Quote(value))
}

// admit starts req on its thread as strategy says, or queues it: with a
// delay (at not zero) the run is always queued, and with enqueue it is
// queued when the thread has a run in flight or runs waiting, or the
// server has as many runs in flight as --max-runs allows. It returns
// the run started here, or the queued run (pending).
func (s *Server) admit(ctx context.Context, req runner.Request, strategy string, at time.Time) (*runner.Run, store.Run, error) {
	// Another user's thread is not found, whatever the strategy: it is
	// neither queued on, interrupted nor rolled back.
	if err := s.host.notOthers(ctx, req.ThreadID); err != nil {
		return nil, store.Run{}, err
	}
	switch strategy {
	case MultitaskEnqueue:
		if !at.IsZero() {
			break
		}
		if s.queueEmpty(ctx, req.ThreadID) {
			// The thread busy, or the server at --max-runs: the run waits.
			run, err := s.runs.Start(ctx, req)
			if !errors.Is(err, runner.ErrBusy) && !errors.Is(err, runner.ErrOverloaded) {
				return run, store.Run{}, err
			}
		}
	case MultitaskInterrupt, MultitaskRollback:
		if at.IsZero() {
			run, err := s.startClearing(ctx, req, strategy == MultitaskRollback)
			return run, store.Run{}, err
		}
		if err := s.clearThread(ctx, req.ThreadID, strategy == MultitaskRollback); err != nil {
			return nil, store.Run{}, err
		}
	}
	if strategy == MultitaskEnqueue || !at.IsZero() {
		q, err := s.runs.Enqueue(ctx, req, at)
		return nil, q, err
	}
	run, err := s.runs.Start(ctx, req)
	return run, store.Run{}, err
}

// startClearing clears the thread, then starts req on it. Another request
// that interrupts the same thread may start its run between the two; that
// run is cleared in turn, as interrupt says, so that of several sent at
// once the last to start is the one left running and none is refused
// with run_in_flight (unless maxClears rounds are lost).
func (s *Server) startClearing(ctx context.Context, req runner.Request, rollback bool) (*runner.Run, error) {
	for round := 1; ; round++ {
		if err := s.clearThread(ctx, req.ThreadID, rollback); err != nil {
			return nil, err
		}
		run, err := s.runs.Start(ctx, req)
		if !wire.Busy(err) || round == wire.MaxClears {
			return run, err
		}
	}
}

// queueEmpty reports whether threadID has no queued run; a store that
// cannot say counts as not empty, so the run is queued rather than
// jumping the queue.
func (s *Server) queueEmpty(ctx context.Context, threadID string) bool {
	st := s.runs.Store()
	if queued, err := st.AnyQueued(ctx); err == nil && !queued {
		return true
	}
	waiting, err := st.QueuedRuns(ctx, threadID)
	return err == nil && len(waiting) == 0
}

// clearThread makes way for a run that interrupts or rolls back: the
// thread's queued runs are cancelled, then its run in flight, here or on
// another replica, is stopped (and rolled back with rollback), and
// clearThread returns once the store has recorded its end.
func (s *Server) clearThread(ctx context.Context, threadID string, rollback bool) error {
	waiting, err := s.runs.Store().QueuedRuns(ctx, threadID)
	if err != nil {
		return err
	}
	for _, q := range waiting {
		if err := s.runs.Dequeue(ctx, q.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return s.stopInFlight(ctx, threadID, rollback)
}

// stopInFlight stops the run in flight on a thread, here or on another
// replica of a shared store, and waits for its end: cancelled, or rolled
// back with rollback.
func (s *Server) stopInFlight(ctx context.Context, threadID string, rollback bool) error {
	stop, action := s.runs.Cancel, "cancel"
	if rollback {
		stop, action = s.runs.Rollback, "rollback"
	}
	if active, _ := stop(threadID); active != nil {
		select {
		case <-active.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if remote, ok := s.runs.RemoteRun(ctx, threadID); ok {
		_, err := s.runs.WaitRemote(ctx, remote, action)
		return err
	}
	return nil
}

// queuedError is the answer to a run that could not be queued.
func queuedError(err error) error {
	if errors.Is(err, runner.ErrQueueFull) {
		return newError(http.StatusTooManyRequests, "queue_full", err.Error())
	}
	return err
}

// awaitQueued waits until queued run r has started and returns it live
// when it runs here, or nil when another replica has it (or it has
// already ended); ended is how the store has it then.
func (s *Server) awaitQueued(ctx context.Context, r store.Run) (live *runner.Run, now store.Run, err error) {
	now, err = s.runs.AwaitStart(ctx, r.ID)
	if err != nil {
		return nil, now, err
	}
	if run := s.runs.Active(r.ThreadID); run != nil && run.ID == r.ID {
		return run, now, nil
	}
	return nil, now, nil
}

// queuedSource is the event source of a queued run's stream: it waits for
// the run to start, then reads its events live when it runs here, or from
// the store when another replica has it. A wait that outlasts Next's
// context is the stream's keep-alive.
type queuedSource struct {
	s *Server
	r store.Run
	// after is the id of the last event the client has seen.
	after int64
	src   wire.EventSource
}

func (q *queuedSource) Next(ctx context.Context) (stream.Event, error) {
	if q.src == nil {
		live, _, err := q.s.awaitQueued(ctx, q.r)
		switch {
		case errors.Is(err, store.ErrNotFound):
			// Cancelled before it started, or rolled back.
			return stream.Event{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"cancelled":true}}`)}, nil
		case err != nil:
			return stream.Event{}, err
		case live != nil:
			q.src = live.Log.Subscribe(q.after)
		default:
			q.src = q.s.runs.Follow(q.r.ID, q.after)
		}
	}
	return q.src.Next(ctx)
}

// answerStored answers runs/wait for run r, which runs on another replica
// or has ended: with its output once it has ended, read from its done
// event in the store.
func (s *Server) answerStored(c echo.Context, r store.Run) error {
	ctx := c.Request().Context()
	f := s.runs.Follow(r.ID, 0)
	defer f.Close()
	var done stream.Event
	for {
		e, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // the client left; the run goes on
			}
			if errors.Is(err, store.ErrNotFound) {
				return newError(http.StatusConflict, "run_cancelled", "run "+r.ID+" on thread "+r.ThreadID+" was cancelled before it started, or rolled back")
			}
			return err
		}
		if e.Type == stream.TypeDone {
			done = e
		}
	}
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(done.Data, &d)
	var ended struct {
		Error     string `json:"error"`
		Cancelled bool   `json:"cancelled"`
	}
	_ = json.Unmarshal(d.Output, &ended)
	switch {
	case ended.Cancelled:
		return newError(http.StatusConflict, "run_cancelled", "the run on thread "+r.ThreadID+" was cancelled before it finished; its completed steps are kept")
	case ended.Error != "":
		return newError(http.StatusInternalServerError, "run_failed", ended.Error)
	}
	return c.JSONBlob(http.StatusOK, d.Output)
}
