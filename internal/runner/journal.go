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
type journal struct {
	m   *Manager
	run *Run

	mu sync.Mutex
	// start is the step the run started from, step the last one saved.
	start, step int
	// events is the id of the last event saved with a step.
	events int64
	// last is the state of the last step saved.
	last thread.State
	// input is how many messages of the run's input its first step adds.
	input int
}

// newJournal starts the journal of run, which goes on from step holding
// values.
func newJournal(m *Manager, run *Run, step int, values thread.State) *journal {
	return &journal{m: m, run: run, start: step, step: step, last: values, events: run.stored}
}

// Checkpoint saves a step of the run (agent.Host).
func (j *journal) Checkpoint(ctx context.Context, added []thread.Message, values thread.State) error {
	return j.save(ctx, added, values, nil)
}

// save saves the next step: the messages it added, its state values and
// the run's events published since the last step, with done after them
// when end is set. With end, the end of the run is recorded in the same
// transaction. The save goes on when ctx ends: a step the run has taken is
// saved whole or not at all.
func (j *journal) save(ctx context.Context, added []thread.Message, values thread.State, end *store.Finish, done ...stream.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	events := append(j.run.Log.Since(j.events), done...)
	defer j.m.storeTimer("save_step")()
	err := j.m.store.SaveStep(context.WithoutCancel(ctx), store.Step{
		ThreadID: j.run.ThreadID, RunID: j.run.ID, Route: j.run.RouteID, Step: j.step + 1,
		Append: added, Values: values, Events: events, Finish: end, Input: j.firstInput(),
	})
	if err != nil {
		return err
	}
	j.step++
	if len(events) > 0 {
		j.events = events[len(events)-1].ID
	}
	j.last = values
	return nil
}

// firstInput is the input count of the next step: the run's input on its
// first step, none after. The caller holds mu.
func (j *journal) firstInput() int {
	if j.step == j.start {
		return j.input
	}
	return 0
}

// unsaved returns the run's events no step has saved, then done.
func (j *journal) unsaved(done stream.Event) []stream.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append(j.run.Log.Since(j.events), done)
}

// saved reports whether the run has saved a step, and returns the state
// of the last step saved (the one the run started from when none).
func (j *journal) saved() (bool, thread.State) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.step > j.start, j.last
}
