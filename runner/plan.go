package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// ErrNoPlan is returned for a thread whose route has no harness-owned plan.
var ErrNoPlan = errors.New("this thread's route has no harness-owned plan; add enforce: true to the front matter of its plan.md")

// SignalError is a supervisor action the plan cannot take in its state.
type SignalError struct{ Msg string }

func (e *SignalError) Error() string { return e.Msg }

func (r *Run) pendingSignal() string {
	s, _ := r.signal.Load().(string)
	return s
}

// applySignal runs the route's Signal hooks on values and emits their
// events; ok is false when no hook handled the signal.
func (m *Manager) applySignal(p *capabilities.Prepared, values thread.State, sig string, emit func(stream.Event)) (thread.State, bool) {
	handled := false
	for _, h := range p.Hooks {
		if h.Signal == nil {
			continue
		}
		eff := h.Signal(values, sig)
		next, err := p.Apply(values, eff.Update)
		if err != nil || eff.Update == nil {
			continue
		}
		values, handled = next, true
		for _, e := range eff.Events {
			emit(e)
		}
	}
	return values, handled
}

// Supervise applies a supervisor action ("pause", "resume" or "cancel") to
// the plan of threadID. With a run in flight, pause and cancel are handed to
// the run, which stops at its next step boundary (cancel also interrupts the
// model call); Supervise waits up to wait for the run to end. With no run,
// the plan is changed and saved as a new checkpoint.
func (m *Manager) Supervise(ctx context.Context, threadID, action string, wait time.Duration) error {
	if run := m.Active(threadID); run != nil {
		if action == "resume" {
			return &SignalError{Msg: "a run is in flight on this thread, so the plan is not paused"}
		}
		run.signal.Store(action)
		if action == "cancel" {
			run.cancelled.Store(true)
			run.cancel()
		}
		select {
		case <-run.Done():
			return nil
		case <-time.After(wait):
			return fmt.Errorf("the run did not reach a step boundary within %s; the %s takes effect when it does", wait, action)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if r, ok := m.RemoteRun(ctx, threadID); ok {
		return m.superviseRemote(ctx, r, action, wait)
	}
	cp, err := m.store.Latest(ctx, threadID)
	if err != nil {
		return err
	}
	p, ok := m.App().Routes[cp.Route]
	if !ok || len(p.Hooks) == 0 {
		return ErrNoPlan
	}
	values := withDefaults(p, cp.Values)
	var effErr error
	for _, h := range p.Hooks {
		if h.Signal == nil {
			continue
		}
		eff := h.Signal(values, action)
		if eff.Update == nil {
			effErr = &SignalError{Msg: fmt.Sprintf("the plan cannot %s in its current state", action)}
			continue
		}
		next, err := p.Apply(values, eff.Update)
		if err != nil {
			return err
		}
		values, effErr = next, nil
	}
	if effErr != nil {
		return effErr
	}
	err = m.store.SaveValues(ctx, threadID, cp.Step+1, values)
	if errors.Is(err, store.ErrBusy) {
		return ErrBusy
	}
	return err
}

// PlanOf returns the thread's state values for its plan, with route
// defaults filled in (a new thread shows its draft), and whether a run is in
// flight.
func (m *Manager) PlanOf(ctx context.Context, threadID string) (thread.State, bool, error) {
	cp, err := m.store.Latest(ctx, threadID)
	if err != nil {
		return nil, false, err
	}
	p, ok := m.App().Routes[cp.Route]
	if !ok || len(p.Hooks) == 0 {
		return nil, false, ErrNoPlan
	}
	running := m.Active(threadID) != nil
	if !running {
		_, running = m.RemoteRun(ctx, threadID)
	}
	return withDefaults(p, cp.Values), running, nil
}
