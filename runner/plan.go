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
// the plan of threadID.
//
// With a run in flight, pause and cancel are handed to the run, which acts
// on them at its next step boundary (a cancel also interrupts the model
// call), or when it ends. Supervise waits up to wait for the run to end;
// when it has not, pending is true and the action is still on its way.
// With no run, the plan is changed and saved as a new checkpoint.
func (m *Manager) Supervise(ctx context.Context, threadID, action string, wait time.Duration) (pending bool, err error) {
	if run := m.Active(threadID); run != nil {
		if !m.ownsPlan(run.RouteID) {
			return false, ErrNoPlan
		}
		var reached bool
		switch action {
		case "resume":
			return false, &SignalError{Msg: "a run is in flight on this thread, so the plan is not paused"}
		case "cancel":
			reached = run.requestCancel(action)
		default:
			var cancelling bool
			if reached, cancelling = run.sendSignal(action); cancelling {
				return false, &SignalError{Msg: "the run is being cancelled, and its plan with it"}
			}
		}
		if reached {
			timer := time.NewTimer(wait)
			defer timer.Stop()
			select {
			case <-run.Done():
				return false, nil
			case <-timer.C:
				return true, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		// The run's outcome was decided before the action reached it: once
		// it is saved, take the action on the saved plan.
		select {
		case <-run.Done():
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return false, m.signalSaved(ctx, threadID, action)
}

// ownsPlan reports whether route has a harness-owned plan.
func (m *Manager) ownsPlan(route string) bool {
	p, ok := m.App().Routes[route]
	return ok && len(p.Hooks) > 0
}

// signalSaved applies a supervisor action to the saved plan of a thread
// with no run in flight.
func (m *Manager) signalSaved(ctx context.Context, threadID, action string) error {
	if err := m.settle(threadID); err != nil {
		return err
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

// PlanView is a thread's plan as a supervisor sees it.
type PlanView struct {
	// Values are the thread's state values, with route defaults filled in
	// (a new thread shows its draft).
	Values thread.State
	// Running is true while a run is in flight.
	Running bool
	// PendingSignal is a supervisor action ("pause", "cancel") the run in
	// flight has not reached yet.
	PendingSignal string
}

// PlanOf returns the thread's plan as of its last checkpoint. During a run
// it is the plan of the run's route, so the first run on a thread shows the
// route's draft until its first step is saved.
func (m *Manager) PlanOf(ctx context.Context, threadID string) (PlanView, error) {
	run := m.Active(threadID)
	cp, err := m.store.Latest(ctx, threadID)
	if err != nil {
		return PlanView{}, err
	}
	route := cp.Route
	if run != nil {
		route = run.RouteID
	}
	p, ok := m.App().Routes[route]
	if !ok || len(p.Hooks) == 0 {
		return PlanView{}, ErrNoPlan
	}
	v := PlanView{Values: withDefaults(p, cp.Values)}
	if run != nil {
		v.Running, v.PendingSignal = true, run.pendingSignal()
	}
	return v, nil
}
