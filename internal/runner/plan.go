package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
)

// The Manager is the capabilities.ThreadHost of the capabilities' HTTP
// routes (the harness's /threads/:id/plan).
var _ capabilities.ThreadHost = (*Manager)(nil)

// Thread returns the thread as of its last checkpoint
// (capabilities.ThreadHost). During a run it is seen on the run's route, so
// the first run on a thread shows the route's defaults until its first step
// is saved.
func (m *Manager) Thread(ctx context.Context, threadID string) (capabilities.ThreadView, error) {
	if err := m.owned(ctx, threadID); err != nil {
		return capabilities.ThreadView{}, err
	}
	run := m.Active(threadID)
	cp, err := m.history.Latest(ctx, threadID)
	if err != nil {
		return capabilities.ThreadView{}, err
	}
	route := cp.Route
	if run != nil {
		route = run.RouteID
	}
	var v capabilities.ThreadView
	if p, ok := m.App().Routes[route]; ok {
		v.Route, v.Values = p, withDefaults(p, cp.Values)
	} else {
		v.Values = cp.Values
	}
	if run != nil {
		v.Running, v.PendingSignal = true, run.pendingSignal()
	} else if r, ok := m.RemoteRun(ctx, threadID); ok {
		v.Running = true // on another replica
		if p, ok := m.App().Routes[r.Route]; ok {
			v.Route = p
		}
	}
	return v, nil
}

// owned returns nil when ctx may reach the thread (ownership.Sees), and
// for another user's thread the store's own not-found answer, so that it
// reads as a missing one; a ctx that reaches every thread reads nothing.
func (m *Manager) owned(ctx context.Context, threadID string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	t, err := m.threads.GetThread(ctx, threadID)
	if err == nil && !ownership.Sees(ctx, t.Owner) {
		return fmt.Errorf("thread %q: %w", threadID, store.ErrNotFound)
	}
	return err
}

// Signal hands a supervisor signal ("pause", "resume" or "cancel") to the
// thread (capabilities.ThreadHost).
//
// With a run in flight, pause and cancel are handed to the run, which acts
// on them at its next step boundary (a cancel also interrupts the model
// call), or when it ends. Signal waits up to wait for the run to end; when
// it has not, pending is true and the signal is still on its way. With no
// run, the route's Signal hooks change the saved state, which is saved as a
// new checkpoint.
func (m *Manager) Signal(ctx context.Context, threadID, signal string, wait time.Duration) (pending bool, err error) {
	if err := m.owned(ctx, threadID); err != nil {
		return false, err
	}
	if run := m.Active(threadID); run != nil {
		if !m.takesSignals(run.RouteID) {
			return false, capabilities.ErrSignalRefused
		}
		var reached bool
		switch signal {
		case "cancel":
			reached = run.requestCancel(signal)
		case "pause":
			var cancelling bool
			if reached, cancelling = run.sendSignal(signal); cancelling {
				return false, capabilities.ErrRunCancelling
			}
		default:
			return false, capabilities.ErrRunInFlight
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
		// The run's outcome was decided before the signal reached it: once
		// it is saved, take the signal on the saved state.
		select {
		case <-run.Done():
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if r, ok := m.RemoteRun(ctx, threadID); ok {
		return m.signalRemote(ctx, r, signal, wait)
	}
	return false, m.signalSaved(ctx, threadID, signal)
}

// takesSignals reports whether route has a Signal hook to act on a signal.
func (m *Manager) takesSignals(route string) bool {
	p, ok := m.App().Routes[route]
	if !ok {
		return false
	}
	for _, h := range p.Hooks {
		if h.Signal != nil {
			return true
		}
	}
	return false
}

// signalSaved applies a supervisor signal to the saved state of a thread
// with no run in flight.
func (m *Manager) signalSaved(ctx context.Context, threadID, signal string) error {
	if err := m.settle(threadID); err != nil {
		return err
	}
	cp, err := m.history.Latest(ctx, threadID)
	if err != nil {
		return err
	}
	p, ok := m.App().Routes[cp.Route]
	if !ok {
		return capabilities.ErrSignalRefused
	}
	values, _, ok := p.Signal(withDefaults(p, cp.Values), signal)
	if !ok {
		return capabilities.ErrSignalRefused
	}
	err = m.history.SaveValues(ctx, threadID, cp.Step+1, values)
	if errors.Is(err, store.ErrBusy) {
		return ErrBusy
	}
	return err
}
