package runner

import (
	"context"
	"sync"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// journal is what a run has saved: the step its last checkpoint is, the
// last of the run's events saved with it, and the state values it holds.
// Every step of the run goes to the store through save, the last one (with
// the end of the run) included.
//
// A step in the middle of a run may be written behind (CheckpointBehind):
// the journal counts it as saved at once, and keeps what the store surely
// holds (sure) until the store says the write landed. A write behind that
// fails is reported by the next save, and the journal goes back to sure.
type journal struct {
	m   *Manager
	run *Run

	mu sync.Mutex
	// start is the step the run started from.
	start int
	// at is the journal's position: what has been saved, or is being
	// written behind.
	at position
	// sure is what the store holds for certain: at, unless pending.
	sure position
	// pending is the last step written behind whose write has not been
	// seen to land, or nil.
	pending *store.Pending
	// input is how many messages of the run's input its first step adds.
	input int
}

// position is how far a journal has saved: the step, the id of the last
// event saved with a step, and the state of that step.
type position struct {
	step   int
	events int64
	last   thread.State
}

// newJournal starts the journal of run, which goes on from step holding
// values.
func newJournal(m *Manager, run *Run, step int, values thread.State) *journal {
	at := position{step: step, events: run.stored, last: values}
	return &journal{m: m, run: run, start: step, at: at, sure: at}
}

// Checkpoint saves a step of the run (agent.Host).
func (j *journal) Checkpoint(ctx context.Context, added []thread.Message, values thread.State) error {
	return j.save(ctx, added, values, nil)
}

// CheckpointBehind saves a step of the run in the middle of it, written
// behind (agent.WriteBehind): it returns once the step is queued, and the
// store commits it with the next write that comes along. An error is
// that of an earlier step written behind.
func (j *journal) CheckpointBehind(ctx context.Context, added []thread.Message, values thread.State) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.check(); err != nil {
		return err
	}
	st, events := j.next(added, values, nil)
	p := j.m.store.SaveStepBehind(context.WithoutCancel(ctx), st)
	if err := p.Failed(); err != nil {
		return err
	}
	j.pending = p
	j.advance(events, values)
	return nil
}

// save saves the next step: the messages it added, its state values and
// the run's events published since the last step, with done after them
// when end is set. With end, the end of the run is recorded in the same
// transaction. The save goes on when ctx ends: a step the run has taken is
// saved whole or not at all. A step written behind before it lands first,
// in the same transaction when it is still queued.
func (j *journal) save(ctx context.Context, added []thread.Message, values thread.State, end *store.Finish, done ...stream.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.check(); err != nil {
		return err
	}
	st, events := j.next(added, values, end, done...)
	defer j.m.storeTimer("save_step")()
	err := j.m.store.SaveStep(context.WithoutCancel(ctx), st)
	if j.pending != nil {
		// SaveStep waited for it, unless st was refused before its write.
		if perr := j.pending.Wait(); perr != nil {
			j.at, j.pending = j.sure, nil
			return perr
		}
		j.pending, j.sure = nil, j.at
	}
	if err != nil {
		return err
	}
	j.advance(events, values)
	j.sure = j.at
	return nil
}

// next is the step that follows the journal's position, with the run's
// events since then and done. The caller holds mu.
func (j *journal) next(added []thread.Message, values thread.State, end *store.Finish, done ...stream.Event) (store.Step, []stream.Event) {
	events := append(j.run.Log.Since(j.at.events), done...)
	return store.Step{
		ThreadID: j.run.ThreadID, RunID: j.run.ID, Route: j.run.RouteID, Step: j.at.step + 1,
		Append: added, Values: values, Events: events, Finish: end, Input: j.firstInput(), After: j.pending,
	}, events
}

// advance moves the journal's position past a step that saved events and
// values. The caller holds mu.
func (j *journal) advance(events []stream.Event, values thread.State) {
	j.at.step++
	if len(events) > 0 {
		j.at.events = events[len(events)-1].ID
	}
	j.at.last = values
}

// check reports the failure of the step written behind, if it has failed,
// and moves the journal back to what the store holds. The caller holds
// mu.
func (j *journal) check() error {
	if j.pending == nil {
		return nil
	}
	if err := j.pending.Failed(); err != nil {
		j.at, j.pending = j.sure, nil
		return err
	}
	return nil
}

// settle waits for the step written behind, if any, to land (committing
// it now if it is still queued), so that what the journal says it saved
// is in the store: before a write about the run that is not a step (its
// end recorded apart, its rollback). A failure is logged: the journal
// goes back to what the store holds, and the run's end then saves the
// events that step did not.
func (j *journal) settle() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.pending == nil {
		return
	}
	if err := j.pending.Wait(); err != nil {
		j.m.logger.Error("a step of the run written behind was not saved", "thread", j.run.ThreadID, "run", j.run.ID, "err", err)
		j.at = j.sure
	} else {
		j.sure = j.at
	}
	j.pending = nil
}

// firstInput is the input count of the next step: the run's input on its
// first step, none after. The caller holds mu.
func (j *journal) firstInput() int {
	if j.at.step == j.start {
		return j.input
	}
	return 0
}

// unsaved returns the run's events no step has saved, then done.
func (j *journal) unsaved(done stream.Event) []stream.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append(j.run.Log.Since(j.at.events), done)
}

// saved reports whether the run has saved a step, and returns the state
// of the last step saved (the one the run started from when none).
func (j *journal) saved() (bool, thread.State) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.at.step > j.start, j.at.last
}
