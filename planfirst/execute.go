package planfirst

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/todo"
)

// Status is a step's status: the one status type of package todo, so a
// step maps onto a harness plan item as is.
type Status = todo.Status

// Step statuses.
const (
	Pending    = todo.Pending
	InProgress = todo.InProgress
	Completed  = todo.Completed
	Failed     = todo.Failed
	Skipped    = todo.Skipped
)

// Runner runs one step: task is the step's task with its placeholders
// resolved. The returned text is the step's output; an error fails the step
// without stopping the plan.
type Runner func(ctx context.Context, step Step, task string) (string, error)

// Event tells an Observer about a step changing status.
type Event struct {
	StepID string `json:"step_id"`
	// Index is the step's position in the execution order, from 0; Total
	// is the number of steps.
	Index  int    `json:"index"`
	Total  int    `json:"total"`
	Status Status `json:"status"`
	// Task is the resolved task (empty for a skipped step).
	Task   string `json:"task,omitempty"`
	Output string `json:"output,omitempty"`
	// Err is the failure for a failed step, and why it did not run for a
	// skipped one.
	Err string `json:"error,omitempty"`
}

// Observer sees every status change: in_progress before a step runs, then
// completed or failed after it, and skipped for each step left when the run
// stops. It is never called concurrently: it runs on the executing
// goroutine, between steps, which is where a caller emits plan_update
// events and checks for a pause. With steps running in parallel, the events
// of one step come in order (in_progress, then completed or failed), and
// those of different steps interleave as the steps start and end.
//
// Returning a non-nil error (ErrStop, or the caller's own reason) stops the
// plan: returned for an in_progress event, that step does not run; returned
// after a step, no further step starts (steps already running finish and are
// reported). The steps left are reported as skipped with the error's text as
// the reason. Errors returned for skipped events are ignored.
type Observer func(Event) error

// ErrStop is an error an Observer can return to stop the plan between steps.
var ErrStop = errors.New("stopped between steps")

// Execute runs p's steps in Order, one at a time, calling run for each with
// its placeholders resolved from the outputs of the steps before it.
//
// A failed step does not stop the plan: its placeholders resolve to a marked
// error ("[step E1 failed: …]"), later steps still run, and the report has
// HadErrors set. A runner that panics fails its step the same way. The plan
// stops early only when ctx is done (checked before each step; a step whose
// runner fails because ctx was cancelled counts as skipped, not failed) or
// when observe returns an error; the steps left are skipped and the report
// has Stopped set. observe may be nil. p should be valid (see Validate).
func Execute(ctx context.Context, p *Plan, run Runner, observe Observer) Report {
	return ResumeParallel(ctx, p, Report{}, 1, run, observe)
}

// ExecuteParallel is Execute running up to parallel independent steps at
// once: a step starts as soon as every step it depends on (its deps and the
// steps its placeholders name) has ended and fewer than parallel steps are
// running; among ready steps the one first in Order starts first. The
// report lists the steps in Order whatever order they ended in, and with
// parallel 1 the run is exactly Execute's.
func ExecuteParallel(ctx context.Context, p *Plan, parallel int, run Runner, observe Observer) Report {
	return ResumeParallel(ctx, p, Report{}, parallel, run, observe)
}

// finished is a step's runner returning.
type finished struct {
	k    int
	text string
	err  error
}

// Resume continues a plan that stopped: steps that prior reports as
// completed or failed, or as skipped by a person (StepResult.Decided), keep
// their results (no events are sent for them) and feed placeholders; every
// other step runs as in Execute. Resume with an
// empty prior report is Execute.
func Resume(ctx context.Context, p *Plan, prior Report, run Runner, observe Observer) Report {
	return ResumeParallel(ctx, p, prior, 1, run, observe)
}

// ResumeParallel is Resume running up to parallel steps at once, as
// ExecuteParallel does (less than 1 means 1).
func ResumeParallel(ctx context.Context, p *Plan, prior Report, parallel int, run Runner, observe Observer) Report {
	if observe == nil {
		observe = func(Event) error { return nil }
	}
	parallel = max(parallel, 1)
	kept := make(map[string]StepResult, len(prior.Steps))
	for _, r := range prior.Steps {
		if r.Status == Completed || r.Status == Failed || r.Status == Skipped && r.Decided {
			kept[r.Step.ID] = r
		}
	}
	order := orderIndices(p)
	n := len(order)
	waits := waitsOf(p, order)
	const (
		waiting = iota
		running
		ended
	)
	state := make([]int, n)
	results := make([]StepResult, n)
	outputs := make(map[string]Output, n)
	events := make([]Event, n)
	for k, i := range order {
		if r, ok := kept[p.Steps[i].ID]; ok {
			state[k], results[k] = ended, r
			outputs[r.Step.ID] = Output{Text: r.Output, Err: r.Err, Skipped: r.Status == Skipped}
		}
	}
	report := Report{Goal: p.Goal, Steps: make([]StepResult, 0, n)}
	ready := func(k int) bool {
		for _, j := range waits[k] {
			if state[j] != ended {
				return false
			}
		}
		return true
	}
	done := make(chan finished)
	inFlight := 0
	for {
		for k := 0; k < n && inFlight < parallel && !report.Stopped; k++ {
			if state[k] != waiting || !ready(k) {
				continue
			}
			if err := ctx.Err(); err != nil {
				report.stop("cancelled: " + err.Error())
				break
			}
			step := p.Steps[order[k]]
			deps := make(map[string]Output, len(waits[k]))
			for _, j := range waits[k] {
				id := p.Steps[order[j]].ID
				deps[id] = outputs[id]
			}
			task := Resolve(step.Task, deps)
			events[k] = Event{StepID: step.ID, Index: k, Total: n, Status: InProgress, Task: task}
			if err := observe(events[k]); err != nil {
				report.stop(err.Error())
				break
			}
			state[k] = running
			inFlight++
			go func() {
				text, err := runStep(ctx, run, step, task)
				done <- finished{k, text, err}
			}()
		}
		if inFlight == 0 {
			break
		}
		f := <-done
		inFlight--
		step := p.Steps[order[f.k]]
		if f.err != nil && ctx.Err() != nil {
			report.stop("cancelled: " + ctx.Err().Error())
			state[f.k] = waiting // reported as skipped below
			continue
		}
		res := StepResult{Step: step, Task: events[f.k].Task, Status: Completed, Output: f.text}
		if f.err != nil {
			res.Status, res.Output, res.Err = Failed, "", f.err.Error()
		}
		state[f.k], results[f.k] = ended, res
		outputs[step.ID] = Output{Text: res.Output, Err: res.Err}
		ev := events[f.k]
		ev.Status, ev.Output, ev.Err = res.Status, res.Output, res.Err
		if err := observe(ev); err != nil {
			report.stop(err.Error())
		}
	}
	for k, i := range order {
		if state[k] == ended {
			report.add(results[k])
			continue
		}
		report.skip(p.Steps[i], k, n, report.StopReason, observe)
	}
	if report.Stopped && !slices.ContainsFunc(report.Steps, func(r StepResult) bool { return r.Status == Skipped && !r.Decided }) {
		report.Stopped, report.StopReason = false, "" // stopped after the last step: nothing was left out
	}
	return report
}

// waitsOf returns, for each position k of order, the earlier positions its
// step waits for: its deps and the steps its placeholders name. A step never
// waits for a later one (a dep caught in a cycle), as when steps run one at a
// time in order.
func waitsOf(p *Plan, order []int) [][]int {
	pos := make(map[string]int, len(order))
	for k, i := range order {
		if _, ok := pos[p.Steps[i].ID]; !ok {
			pos[p.Steps[i].ID] = k
		}
	}
	known := func(id string) bool { _, ok := pos[id]; return ok }
	waits := make([][]int, len(order))
	for k, i := range order {
		add := func(id string) {
			if j, ok := pos[id]; ok && j < k && !slices.Contains(waits[k], j) {
				waits[k] = append(waits[k], j)
			}
		}
		st := p.Steps[i]
		for _, d := range st.Deps {
			add(d)
		}
		for _, r := range scanRefs(st.Task, known) {
			add(r.id)
		}
	}
	return waits
}

// runStep calls run, turning a panic into an error.
func runStep(ctx context.Context, run Runner, step Step, task string) (out string, err error) {
	if run == nil {
		return "", errors.New("no runner was given")
	}
	defer func() {
		if v := recover(); v != nil {
			out, err = "", fmt.Errorf("step panicked: %v", v)
		}
	}()
	return run(ctx, step, task)
}

// add records a finished step.
func (r *Report) add(res StepResult) {
	r.Steps = append(r.Steps, res)
	if res.Status == Failed {
		r.HadErrors = true
	}
}

// stop marks the report stopped, keeping the first reason.
func (r *Report) stop(reason string) {
	if !r.Stopped {
		r.Stopped, r.StopReason = true, reason
	}
}

// skip records a step that did not run and tells the observer.
func (r *Report) skip(step Step, k, total int, reason string, observe Observer) {
	r.Steps = append(r.Steps, StepResult{Step: step, Status: Skipped, Err: reason})
	_ = observe(Event{StepID: step.ID, Index: k, Total: total, Status: Skipped, Err: reason})
}
