package runner

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dawn-go/dawn/capabilities"

	"github.com/dawn-go/dawn/stream"
)

// Run is a run in flight or finished.
type Run struct {
	ID       string
	ThreadID string
	RouteID  string
	Model    string
	// Log holds the run's events; it is closed after "done".
	Log *stream.Log
	// user names the user whose request started the run, when the server's
	// authentication names users: the "always" decisions its hooks see
	// and keep are theirs (see scopeRemembered).
	user string

	// cancel ends the run's context. It is set before the run is
	// registered as the thread's run in flight, so whoever finds the run
	// can cancel it.
	cancel context.CancelFunc

	// mu guards what a canceller or supervisor changes while the run goes.
	mu sync.Mutex
	// ended is set once the run's outcome is decided: from then on a cancel
	// or a signal no longer reaches it.
	ended bool
	// cancelRequested is set by a cancel that arrived before the end.
	cancelRequested bool
	// signal is a supervisor signal ("pause", "cancel") for the loop to act
	// on at the next step boundary.
	signal string

	// exec executes the run, when it was started to execute on its
	// caller's goroutine (Request.OnCaller) and has not yet; see Execute.
	exec func()

	done      chan struct{}
	output    json.RawMessage
	err       error
	cancelled bool      // the run ended cancelled; set before done is closed
	trace     *runTrace // nil when telemetry is off
	// interrupts parked the run; set before done is closed
	interrupts []capabilities.Interrupt
	// webhook is the URL the run's end is POSTed to, or "".
	webhook string
	// queued says the run starts a queued run of its id.
	queued bool
	// rollback says the cancel that stopped the run asked for its steps
	// to be discarded (multitask_strategy "rollback"); guarded by mu.
	rollback bool
	// request is the request kept with the run so that another server can
	// continue it (see ContinueOrphans); nil keeps none.
	request []byte
	// metadata is the JSON object the run was started with (nil: none);
	// threadMetadata the members it sets in its thread's metadata; attrs
	// what its starter keeps with it.
	metadata, threadMetadata, attrs []byte
	// stored is the id of the last event the store held when this server
	// took over the run (see ContinueOrphans); 0 for a run started here.
	stored int64
}

// Interrupts are the interrupts the run parked on, or nil. Valid after
// Done.
func (r *Run) Interrupts() []capabilities.Interrupt { return r.interrupts }

// Done is closed when the run has finished and its result is saved.
func (r *Run) Done() <-chan struct{} { return r.done }

// Execute executes a run started with Request.OnCaller on the calling
// goroutine, and returns once it is done; for any other run it waits for
// Done. Only the caller that started the run may call it. A panic in the
// run ends the process, as it does on the run's own goroutine, rather than
// being caught by the caller (an HTTP server recovers its handlers'
// panics), which would leave the run neither done nor recorded.
func (r *Run) Execute() {
	exec := r.exec
	if exec == nil {
		<-r.done
		return
	}
	r.exec = nil
	defer func() {
		if p := recover(); p != nil {
			go panic(p)
			select {}
		}
	}()
	exec()
}

// Output is the "done" event's output: the final state values, or
// {"error": ...} / {"cancelled": true}. Valid after Done.
func (r *Run) Output() json.RawMessage { return r.output }

// Err is the run's error, nil on success. Valid after Done.
func (r *Run) Err() error { return r.err }

// Cancelled reports whether the run ended because it was cancelled. Valid
// after Done.
func (r *Run) Cancelled() bool { return r.cancelled }

// Cancel stops this run unless its outcome is already decided, and reports
// whether the cancel reached it. Unlike Manager.Cancel, which stops
// whatever runs on a thread, it never reaches a later run of the thread.
func (r *Run) Cancel() bool { return r.requestCancel("") }

// requestCancel cancels the run, with sig ("cancel" or "") as the
// supervisor signal that says why, unless its outcome is already decided.
// It reports whether the cancel reached the run.
func (r *Run) requestCancel(sig string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.cancelRequested = true
	if sig != "" {
		r.signal = sig
	}
	// Under mu, with the signal: whoever sees the context end and then
	// reads the signal sees both.
	r.cancel()
	return true
}

// Rollback stops this run as Cancel does and has its end discard what it
// saved: the thread goes back to the checkpoint the run started from and
// the run is deleted. It reports whether it reached the run.
func (r *Run) Rollback() bool { return r.requestRollback() }

// requestRollback cancels the run and has its end discard its steps,
// unless its outcome is already decided; it reports whether it reached
// the run.
func (r *Run) requestRollback() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.rollback, r.cancelRequested = true, true
	r.cancel()
	return true
}

// rollingBack reports whether a rollback stopped the run.
func (r *Run) rollingBack() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rollback
}

// sendSignal hands sig ("pause") to the run for its next step boundary. It
// reports false when the run's outcome is already decided, and leaves a
// pending cancel in place.
func (r *Run) sendSignal(sig string) (sent bool, cancelling bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false, false
	}
	if r.signal == "cancel" {
		return true, true
	}
	r.signal = sig
	return true, false
}

// pendingSignal is the supervisor signal not acted on yet, or "".
func (r *Run) pendingSignal() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.signal
}

// takeSignal returns the pending signal and clears it, for the loop that
// acts on it. A cancel is not taken: it reaches the loop through the
// context, and the run applies it to the plan when it ends.
func (r *Run) takeSignal() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.signal
	if s == "cancel" {
		return ""
	}
	r.signal = ""
	return s
}

// end decides the run's outcome: from now on cancels and signals no longer
// reach it. It reports whether a cancel came first, and the signal still
// pending.
func (r *Run) end() (cancelled bool, signal string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	return r.cancelRequested, r.signal
}
