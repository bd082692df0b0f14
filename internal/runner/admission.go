package runner

import (
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/store"
)

// admission decides whether the checkpoint a run starts from takes the
// run. The store asks it (check) inside the transaction that starts the
// run, so that a refused request writes nothing: a new run needs a thread
// with no pending interrupt; a resume needs one parked on its route, whose
// pending interrupts its answers answer.
type admission struct {
	a        *app.App
	p        *capabilities.Prepared
	threadID string
	// answers are a resume's answers; nil for a new run.
	answers []capabilities.Answer
	// pending are the interrupts a resume's answers answer.
	pending []capabilities.Interrupt

	// strat is the run strategy the run goes through: the one chosen for a
	// new run, or the one a resume goes on with.
	strat *strategy
	// resolved is what each held-back call of a resume does now, by
	// capabilities.ResolutionKey (agent.Config.Resolved).
	resolved map[string]capabilities.Resolution
}

// check accepts cp for the run, or says why not. For a resume it keeps
// what the answers decide in strat or resolved.
func (ad *admission) check(cp store.Checkpoint) error {
	pending, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil {
		return fmt.Errorf("thread %s: the saved %s value is not a list of interrupts: %w", ad.threadID, capabilities.InterruptsKey, err)
	}
	switch {
	case ad.answers == nil && len(pending) > 0:
		return &InterruptPendingError{ThreadID: ad.threadID, IDs: pendingIDs(pending)}
	case ad.answers == nil:
		return nil
	case len(pending) == 0:
		return fmt.Errorf("thread %s: %w", ad.threadID, ErrNoInterruptPending)
	case cp.Route != ad.p.Route.ID:
		return &ResumeError{Msg: fmt.Sprintf("route: thread %s parked on route %s, not %s; resume it on that route", ad.threadID, cp.Route, ad.p.Route.ID)}
	}
	ad.pending = pending
	return ad.resume(cp, pending)
}

// resume answers the pending interrupts of cp: a run strategy that parked
// the thread goes on itself, and otherwise the route's hooks say what each
// held-back call does.
func (ad *admission) resume(cp store.Checkpoint, pending []capabilities.Interrupt) error {
	var err error
	if ad.strat, err = resumeStrategy(ad.a, ad.p, cp, pending, ad.answers); ad.strat != nil || err != nil {
		// A run strategy parked the thread and goes on itself: no held-back
		// call to resolve, but the run is a resume.
		ad.resolved = map[string]capabilities.Resolution{}
		return err
	}
	ad.resolved, err = resolve(ad.a, ad.p, cp, pending, ad.answers)
	return err
}
