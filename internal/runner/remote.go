package runner

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/dawn-go/dawn/capabilities"
	"io"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// Runs on other replicas.
//
// When several servers share one store (Postgres), a run lives on the
// replica that started it, but a client behind a load balancer may send its
// cancel, plan signal or stream rejoin to any of them. The store's
// Notifier carries signals to the replica that has the run (it acts as on
// a local request), and wakes the replicas that follow a run's events as
// each step commits; the store stays the record, read on every wake-up and
// polled now and then in case a notification was lost.

// remotePoll is how often a replica following another one's run reads the
// store without having been woken.
const remotePoll = time.Second

// signalMsg is a signal for a run on whichever replica has it.
type signalMsg struct {
	Thread string `json:"thread"`
	Run    string `json:"run"`
	// Action is "cancel" (a run cancel), "rollback" (a cancel that
	// discards the run's steps), or a plan action: "plan:pause",
	// "plan:cancel".
	Action string `json:"action"`
}

// notifier returns the store's Notifier, or nil for a store one process
// owns.
func (m *Manager) notifier() store.Notifier {
	n, _ := m.store.(store.Notifier)
	return n
}

// listenSignals acts on the signals other replicas send for the runs of
// this one, until stop is closed. It is started by New when the store is
// shared.
func (m *Manager) listenSignals(n store.Notifier) {
	ch, unsubscribe := n.Subscribe(store.ChannelSignals)
	m.unsubscribe = unsubscribe
	stop := m.stopRemote
	go func() {
		for payload := range chanUntil(ch, stop) {
			var msg signalMsg
			if json.Unmarshal([]byte(payload), &msg) != nil {
				continue
			}
			r := m.Active(msg.Thread)
			if r == nil || r.ID != msg.Run {
				continue // not ours, or already over
			}
			applyRemoteSignal(r, msg.Action)
		}
	}()
}

// applyRemoteSignal does to r what a local request does: Cancel for
// "cancel", Supervise's pause and cancel for "plan:pause" and
// "plan:cancel".
func applyRemoteSignal(r *Run, action string) {
	switch action {
	case "cancel":
		r.requestCancel("")
	case "rollback":
		r.requestRollback()
	case "plan:pause":
		r.sendSignal("pause")
	case "plan:cancel":
		r.requestCancel("cancel")
	}
}

// stopListening ends listenSignals. Calling it again is a no-op.
func (m *Manager) stopListening() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopRemote != nil {
		close(m.stopRemote)
		m.unsubscribe()
		m.stopRemote = nil
	}
}

// chanUntil forwards ch until stop is closed.
func chanUntil(ch <-chan string, stop <-chan struct{}) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		for {
			select {
			case <-stop:
				return
			case s := <-ch:
				select {
				case out <- s:
				case <-stop:
					return
				}
			}
		}
	}()
	return out
}

// RemoteRun returns the run in flight on threadID on another replica, from
// the store: ok is false when the thread has no running run, or it runs
// here, or the store is not shared.
func (m *Manager) RemoteRun(ctx context.Context, threadID string) (store.Run, bool) {
	if m.notifier() == nil || m.Active(threadID) != nil {
		return store.Run{}, false
	}
	runs, err := m.runs.Runs(ctx, threadID)
	if err != nil {
		return store.Run{}, false
	}
	for _, r := range runs {
		if r.Status == store.RunRunning {
			return r, true
		}
	}
	return store.Run{}, false
}

// SignalRemote sends action ("cancel", "plan:pause", "plan:cancel") to the
// replica running run r.
func (m *Manager) SignalRemote(ctx context.Context, r store.Run, action string) error {
	n := m.notifier()
	if n == nil {
		return errors.New("the store is not shared: no other replica can have this run")
	}
	payload, _ := json.Marshal(signalMsg{Thread: r.ThreadID, Run: r.ID, Action: action})
	return n.Publish(ctx, store.ChannelSignals, string(payload))
}

// WaitRemote waits until run r is no longer running, by the store, and
// returns it as it ended; or ctx's error. With an action, it sends it to
// the run (see SignalRemote) first, and again each time it finds the run
// still running after a wait: a notification is lost while the run's
// replica reconnects its listener, and each of these signals is harmless
// to repeat.
func (m *Manager) WaitRemote(ctx context.Context, r store.Run, action string) (store.Run, error) {
	wake, stop := m.wakeups(r.ID)
	defer stop()
	for {
		if action != "" {
			if err := m.SignalRemote(ctx, r, action); err != nil {
				return store.Run{}, err
			}
		}
		if err := waitWake(ctx, wake); err != nil {
			return store.Run{}, err
		}
		cur, err := m.runs.GetRun(ctx, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			// Rolled back: the run and its steps are gone.
			return store.Run{ID: r.ID, ThreadID: r.ThreadID, Route: r.Route, Status: store.RunCancelled}, nil
		}
		if err != nil {
			return store.Run{}, err
		}
		if cur.Status != store.RunRunning {
			return cur, nil
		}
	}
}

// wakeups returns a channel that receives when events of runID commit,
// and the function that ends it.
func (m *Manager) wakeups(runID string) (<-chan struct{}, func()) {
	out := make(chan struct{}, 1)
	n := m.notifier()
	if n == nil {
		return out, func() {}
	}
	ch, unsubscribe := n.Subscribe(store.ChannelEvents)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case id := <-ch:
				if id == runID {
					select {
					case out <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	return out, func() { unsubscribe(); close(stop) }
}

// waitWake waits for a wake-up, or remotePoll, or ctx.
func waitWake(ctx context.Context, wake <-chan struct{}) error {
	t := time.NewTimer(remotePoll)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// followPage is how many events a Follower reads from the store at once:
// a reader that is slow to take them (a stalled client) holds a page, not
// the run's whole log.
const followPage = 128

// Follow returns the events of run runID after the event id after, read
// from the store as they commit, for a run that may be running on another
// replica or has ended: Next gives each event once, in id order, and
// io.EOF after the run's "done" event. A run cut off before its done event
// (its replica died, and its lease expired) ends with a done event saying
// so, as a replay of it does. The log is read a page at a time.
func (m *Manager) Follow(runID string, after int64) *Follower {
	return &Follower{m: m, runID: runID, after: after}
}

// Follower reads a run's events from the store; see Manager.Follow.
type Follower struct {
	m        *Manager
	runID    string
	after    int64
	buf      []stream.Event
	finished bool
	// ended is the run once the store has it ended: every event it will
	// ever have is committed, and no more waiting is needed.
	ended *store.Run
	wake  <-chan struct{}
	stop  func()
}

// Ready reports whether Next has an event (or the end) at hand without
// reading the store.
func (f *Follower) Ready() bool { return len(f.buf) > 0 || f.finished }

// Next returns the next event, waiting for it as long as ctx allows.
func (f *Follower) Next(ctx context.Context) (stream.Event, error) {
	for {
		if len(f.buf) > 0 {
			e := f.buf[0]
			f.buf = f.buf[1:]
			f.after = e.ID
			if e.Type == stream.TypeDone {
				f.finished = true
				f.buf = nil
			}
			return e, nil
		}
		if f.finished {
			f.Close()
			return stream.Event{}, io.EOF
		}
		if err := f.fill(ctx); err != nil {
			return stream.Event{}, err
		}
	}
}

// fill reads the next page of events into f.buf, waits for them while
// the run runs, or ends the events of a run that ended without a done
// event.
func (f *Follower) fill(ctx context.Context) error {
	if f.ended == nil {
		// The run's status first: its last events commit with its end,
		// so the reads after a finished status have them all.
		r, err := f.m.runs.GetRun(ctx, f.runID)
		if err != nil {
			return err
		}
		if r.Status != store.RunRunning {
			r.Output = nil // the final state: not the follower's to hold
			f.ended = &r
		} else if f.wake == nil {
			f.wake, f.stop = f.m.wakeups(f.runID)
		}
	}
	events, err := f.m.history.EventsPage(ctx, f.runID, f.after, followPage)
	switch {
	case err != nil:
		return err
	case len(events) > 0:
		f.buf = events
	case f.ended != nil:
		seen, err := f.doneSeen(ctx)
		if err != nil {
			return err
		}
		f.finished = true
		if !seen {
			f.buf = []stream.Event{InterruptedDone(*f.ended, f.after)}
		}
	default:
		return waitWake(ctx, f.wake)
	}
	return nil
}

// doneSeen reports whether the ended run's log has its done event at
// f.after, the last id the reader has: then there is nothing to add, where
// a log that a crash cut off before its done gets one.
func (f *Follower) doneSeen(ctx context.Context) (bool, error) {
	if f.after <= 0 {
		return false, nil
	}
	last, err := f.m.history.EventsPage(ctx, f.runID, f.after-1, 1)
	if err != nil {
		return false, err
	}
	return len(last) == 1 && last[0].ID == f.after && last[0].Type == stream.TypeDone, nil
}

// Close ends the follower's subscription. Next calls it at the end.
func (f *Follower) Close() {
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
}

// InterruptedDone is the done event that ends the events of a run that
// ended without one, with an id after last: a run a crash cut off
// ({"error","interrupted":true}), or a queued run that never started,
// which ends as any run of its status does: cancelled
// ({"cancelled":true}) or failed ({"error"}).
func InterruptedDone(r store.Run, last int64) stream.Event {
	output := map[string]any{"error": r.Error, "interrupted": true}
	switch r.Status {
	case store.RunCancelled:
		output = map[string]any{"cancelled": true}
	case store.RunError:
		output = map[string]any{"error": r.Error}
	}
	data, _ := json.Marshal(map[string]any{"output": output})
	return stream.Event{ID: last + 1, Type: stream.TypeDone, Data: data}
}

// signalRemote is Signal for a run on another replica: pause and cancel go
// to it, and Signal waits up to wait for the run to end; pending is true
// when it has not.
func (m *Manager) signalRemote(ctx context.Context, r store.Run, signal string, wait time.Duration) (pending bool, err error) {
	if signal != "pause" && signal != "cancel" {
		return false, capabilities.ErrRunInFlight
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := m.WaitRemote(waitCtx, r, "plan:"+signal); err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}
