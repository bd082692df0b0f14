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
	s := newSchedule(ctx, p, prior, max(parallel, 1), run, observe)
	for {
		s.startReady()
		if s.inFlight == 0 {
			break
		}
		s.finish(<-s.done)
	}
	return s.close()
}

// Where a step of a schedule is.
const (
	stepWaiting = iota
	stepRunning
	stepEnded
)

// schedule is one run of a plan's steps: where each step is (by its
// position k in the execution order), what the ended ones produced, and
// the report so far.
type schedule struct {
	ctx      context.Context
	p        *Plan
	parallel int
	run      Runner
	observe  Observer

	order    []int   // plan indices in execution order
	waits    [][]int // for each position, the earlier positions it waits for
	state    []int   // stepWaiting, stepRunning or stepEnded, per position
	results  []StepResult
	outputs  map[string]Output // by step id, for placeholders
	events   []Event           // the in_progress event of each started step
	report   Report
	done     chan finished
	inFlight int
}

// newSchedule lays out p's steps, with the steps prior ended (completed,
// failed, or skipped by a person) already ended with their results.
func newSchedule(ctx context.Context, p *Plan, prior Report, parallel int, run Runner, observe Observer) *schedule {
	kept := make(map[string]StepResult, len(prior.Steps))
	for _, r := range prior.Steps {
		if r.Status == Completed || r.Status == Failed || r.Status == Skipped && r.Decided {
			kept[r.Step.ID] = r
		}
	}
	order := orderIndices(p)
	n := len(order)
	s := &schedule{
		ctx: ctx, p: p, parallel: parallel, run: run, observe: observe,
		order:   order,
		waits:   waitsOf(p, order),
		state:   make([]int, n),
		results: make([]StepResult, n),
		outputs: make(map[string]Output, n),
		events:  make([]Event, n),
		report:  Report{Goal: p.Goal, Steps: make([]StepResult, 0, n)},
		done:    make(chan finished),
	}
	for k, i := range order {
		if r, ok := kept[p.Steps[i].ID]; ok {
			s.state[k], s.results[k] = stepEnded, r
			s.outputs[r.Step.ID] = Output{Text: r.Output, Err: r.Err, Skipped: r.Status == Skipped}
		}
	}
	return s
}

// ready reports whether every step position k waits for has ended.
func (s *schedule) ready(k int) bool {
	for _, j := range s.waits[k] {
		if s.state[j] != stepEnded {
			return false
		}
	}
	return true
}

// startReady starts the waiting steps that are ready, first in order
// first, while fewer than parallel run and the plan has not stopped.
func (s *schedule) startReady() {
	for k := 0; k < len(s.order) && s.inFlight < s.parallel && !s.report.Stopped; k++ {
		if s.state[k] != stepWaiting || !s.ready(k) {
			continue
		}
		if !s.start(k) {
			break
		}
	}
}

// start resolves the step at position k, tells the observer and runs it on
// its own goroutine. It reports false when the plan stopped instead: ctx
// is done or the observer said stop.
func (s *schedule) start(k int) bool {
	if err := s.ctx.Err(); err != nil {
		s.report.stop("cancelled: " + err.Error())
		return false
	}
	step := s.p.Steps[s.order[k]]
	deps := make(map[string]Output, len(s.waits[k]))
	for _, j := range s.waits[k] {
		id := s.p.Steps[s.order[j]].ID
		deps[id] = s.outputs[id]
	}
	task := Resolve(step.Task, deps)
	s.events[k] = Event{StepID: step.ID, Index: k, Total: len(s.order), Status: InProgress, Task: task}
	if err := s.observe(s.events[k]); err != nil {
		s.report.stop(err.Error())
		return false
	}
	s.state[k] = stepRunning
	s.inFlight++
	go func() {
		text, err := runStep(s.ctx, s.run, step, task)
		s.done <- finished{k, text, err}
	}()
	return true
}

// finish records a step's runner returning and tells the observer. A step
// whose runner failed because ctx was cancelled stops the plan and goes
// back to waiting, to be reported as skipped.
func (s *schedule) finish(f finished) {
	s.inFlight--
	step := s.p.Steps[s.order[f.k]]
	if f.err != nil && s.ctx.Err() != nil {
		s.report.stop("cancelled: " + s.ctx.Err().Error())
		s.state[f.k] = stepWaiting // reported as skipped by close
		return
	}
	res := StepResult{Step: step, Task: s.events[f.k].Task, Status: Completed, Output: f.text}
	if f.err != nil {
		res.Status, res.Output, res.Err = Failed, "", f.err.Error()
	}
	s.state[f.k], s.results[f.k] = stepEnded, res
	s.outputs[step.ID] = Output{Text: res.Output, Err: res.Err}
	ev := s.events[f.k]
	ev.Status, ev.Output, ev.Err = res.Status, res.Output, res.Err
	if err := s.observe(ev); err != nil {
		s.report.stop(err.Error())
	}
}

// close reports every step in order, the ones that did not end as skipped.
func (s *schedule) close() Report {
	n := len(s.order)
	for k, i := range s.order {
		if s.state[k] == stepEnded {
			s.report.add(s.results[k])
			continue
		}
		s.report.skip(s.p.Steps[i], k, n, s.report.StopReason, s.observe)
	}
	if s.report.Stopped && !slices.ContainsFunc(s.report.Steps, func(r StepResult) bool { return r.Status == Skipped && !r.Decided }) {
		s.report.Stopped, s.report.StopReason = false, "" // stopped after the last step: nothing was left out
	}
	return s.report
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
