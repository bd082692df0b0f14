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
// stops. It runs on the executing goroutine, between steps, which is where a
// caller emits plan_update events and checks for a pause.
//
// Returning a non-nil error (ErrStop, or the caller's own reason) stops the
// plan: returned for an in_progress event, that step does not run; returned
// after a step, no further step runs. The steps left are reported as skipped
// with the error's text as the reason. Errors returned for skipped events are
// ignored.
type Observer func(Event) error

// ErrStop is an error an Observer can return to stop the plan between steps.
var ErrStop = errors.New("stopped between steps")

// Execute runs p's steps in Order, calling run for each with its
// placeholders resolved from the outputs of the steps before it.
//
// A failed step does not stop the plan: its placeholders resolve to a marked
// error ("[step E1 failed: …]"), later steps still run, and the report has
// HadErrors set. A runner that panics fails its step the same way. The plan
// stops early only when ctx is done (checked before each step; a step whose
// runner fails because ctx was cancelled counts as skipped, not failed) or
// when observe returns an error; the steps left are skipped and the report
// has Stopped set. observe may be nil. p should be valid (see Validate).
func Execute(ctx context.Context, p *Plan, run Runner, observe Observer) Report {
	return Resume(ctx, p, Report{}, run, observe)
}

// Resume continues a plan that stopped: steps that prior reports as
// completed or failed keep their results (no events are sent for them) and
// feed placeholders; every other step runs as in Execute. Resume with an
// empty prior report is Execute.
func Resume(ctx context.Context, p *Plan, prior Report, run Runner, observe Observer) Report {
	if observe == nil {
		observe = func(Event) error { return nil }
	}
	kept := make(map[string]StepResult, len(prior.Steps))
	for _, r := range prior.Steps {
		if r.Status == Completed || r.Status == Failed {
			kept[r.Step.ID] = r
		}
	}
	order := orderIndices(p)
	report := Report{Goal: p.Goal, Steps: make([]StepResult, 0, len(order))}
	outputs := make(map[string]Output, len(order))
	for k, i := range order {
		step := p.Steps[i]
		if r, ok := kept[step.ID]; ok {
			report.add(r, outputs)
			continue
		}
		if report.Stopped {
			report.skip(step, k, len(order), report.StopReason, observe)
			continue
		}
		if err := ctx.Err(); err != nil {
			report.stop("cancelled: " + err.Error())
			report.skip(step, k, len(order), report.StopReason, observe)
			continue
		}
		task := Resolve(step.Task, outputs)
		ev := Event{StepID: step.ID, Index: k, Total: len(order), Status: InProgress, Task: task}
		if err := observe(ev); err != nil {
			report.stop(err.Error())
			report.skip(step, k, len(order), report.StopReason, observe)
			continue
		}
		text, err := runStep(ctx, run, step, task)
		result := StepResult{Step: step, Task: task, Status: Completed, Output: text}
		switch {
		case err != nil && ctx.Err() != nil:
			report.stop("cancelled: " + ctx.Err().Error())
			report.skip(step, k, len(order), report.StopReason, observe)
			continue
		case err != nil:
			result.Status, result.Output, result.Err = Failed, "", err.Error()
		}
		report.add(result, outputs)
		ev.Status, ev.Output, ev.Err = result.Status, result.Output, result.Err
		if err := observe(ev); err != nil {
			report.stop(err.Error())
		}
	}
	if report.Stopped && !slices.ContainsFunc(report.Steps, func(r StepResult) bool { return r.Status == Skipped }) {
		report.Stopped, report.StopReason = false, "" // stopped after the last step: nothing was left out
	}
	return report
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

// add records a finished step and its output for later placeholders.
func (r *Report) add(res StepResult, outputs map[string]Output) {
	r.Steps = append(r.Steps, res)
	outputs[res.Step.ID] = Output{Text: res.Output, Err: res.Err}
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
