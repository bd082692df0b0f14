package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
)

// Plan modes of ScaiGrid's planner, as plan.md's mode key takes them: how
// the model's own plan (writeTodos) runs. Sequential is the default: the
// model works the items one at a time. Parallel fans them out (FanOut).
const (
	ModeSequential = "sequential"
	ModeParallel   = "parallel"
)

// DefaultParallel is how many items a parallel plan runs at once when
// plan.md's parallel does not say.
const DefaultParallel = 2

// Events a fan-out sends around each item it runs, with the item's id in
// "step" (the names and shapes of plan-first's step events). The events of
// the agent running an item reach the stream as subagent events whose
// call_id is the item's id too.
const (
	EventStepStarted  = "step_started"
	EventStepFinished = "step_finished"
)

// maxResult bounds each item's result handed back to the model, in bytes.
const maxResult = 4000

// fanOutRule is what the prompt says about a parallel plan.
const fanOutRule = " The harness runs this plan for you: once writeTodos accepts the list, every open item runs at once on a worker that sees only the item's text, so write each item as a self-contained task. Their results come back in writeTodos's result; write the final answer from them."

// ItemResult is one item a fan-out ran: its result (the worker's answer)
// or, for a failed item, the last error.
type ItemResult struct {
	ID       string `json:"id"`
	Content  string `json:"content"`
	Status   Status `json:"status"`
	Result   string `json:"result,omitempty"`
	Error    string `json:"error,omitempty"`
	Attempts int    `json:"attempts"`
}

// FanOutReport is what a fan-out did.
type FanOutReport struct {
	// Results are the items that ran, in plan order whatever order they
	// ended in; an item that ran several times is listed once.
	Results []ItemResult `json:"results"`
	// Stopped says why items were left open: the supervisor's signal, or
	// the plan pausing or ending. Empty when every open item ran.
	Stopped string `json:"stopped,omitempty"`
}

// FanOut runs the open (not yet terminal) items of p at once, each as the
// task of a fresh agent through steps (a worker of the route), up to
// s.Parallel (else DefaultParallel) at a time, starting them in plan order.
// It is mode: parallel once the model's plan is accepted.
//
// Every running item is in_progress. A finished item is completed with the
// first line of its answer as evidence. A failed one counts an attempt and
// runs again until it has failed s.RetryCap times, when it is failed; the
// plan then settles by the harness's rules (failed once every item ended
// and one failed, paused when the auto-advance budget is spent). Before
// each start the supervisor's signal is checked: with one pending, or once
// the plan stopped running, no further item starts, and the items running
// finish and are recorded.
//
// changed is called after every change to p, on the calling goroutine,
// never concurrently (the caller emits plan_update there). Each item's
// events come in order on steps: step_started, its subagent events, then
// step_finished. When ctx ends, FanOut waits for the items running and
// returns ctx's error; the items it cut short are left as they were.
func FanOut(ctx context.Context, steps capabilities.StepRunner, p *Plan, s Settings, changed func()) (FanOutReport, error) {
	if changed == nil {
		changed = func() {}
	}
	parallel := s.Parallel
	if parallel < 1 {
		parallel = DefaultParallel
	}
	f := &fanOut{ctx: ctx, steps: steps, p: p, changed: changed, parallel: parallel, retryCap: max(s.RetryCap, 1),
		done: make(chan itemDone), ran: map[int]*ItemResult{}}
	for i, it := range p.Items {
		if !it.Status.Terminal() {
			f.queue = append(f.queue, i)
		}
	}
	for {
		f.startReady()
		if len(f.running) == 0 {
			break
		}
		f.finish(<-f.done)
	}
	for i := range p.Items {
		if res := f.ran[i]; res != nil && res.Status != "" {
			f.report.Results = append(f.report.Results, *res)
		}
	}
	if err := ctx.Err(); err != nil {
		return f.report, err
	}
	return f.report, nil
}

// itemDone is an item's worker returning.
type itemDone struct {
	i    int
	text string
	err  error
}

// fanOut is one FanOut: the items waiting to start (queue) and running,
// what the ones that ran gave, and the report so far.
type fanOut struct {
	ctx      context.Context
	steps    capabilities.StepRunner
	p        *Plan
	changed  func()
	parallel int
	retryCap int

	queue   []int // items to start, in order
	running []int // items running now
	ran     map[int]*ItemResult
	done    chan itemDone
	report  FanOutReport
}

// stop records why items are left open; the first reason wins.
func (f *fanOut) stop(why string) {
	if f.report.Stopped == "" {
		f.report.Stopped = why
	}
}

// startReady starts queued items while fewer than parallel run, checking
// the supervisor's signal and the plan's state before each.
func (f *fanOut) startReady() {
	// The workers go only once every item of this batch is announced, so
	// a client sees each step_started with its plan_update before any
	// worker's events.
	var launch []func()
	defer func() {
		for _, run := range launch {
			run()
		}
	}()
	for len(f.queue) > 0 && len(f.running) < f.parallel && f.report.Stopped == "" && f.ctx.Err() == nil {
		if sig := f.steps.Signal(); sig != "" {
			f.stop("supervisor " + sig)
			break
		}
		if f.p.State != Running {
			f.stop("the plan is " + string(f.p.State))
			break
		}
		launch = append(launch, f.start())
	}
}

// start marks the first queued item running and tells the stream; the
// function it returns runs the item on its own goroutine.
func (f *fanOut) start() func() {
	i := f.queue[0]
	f.queue = f.queue[1:]
	f.running = append(f.running, i)
	MarkRunning(f.p, f.running)
	it := f.p.Items[i]
	f.steps.Emit(stream.New(EventStepStarted, map[string]any{"step": it.ID, "index": i, "total": len(f.p.Items), "attempt": it.Attempts + 1}))
	f.changed()
	task := itemTask(f.p, i)
	return func() {
		go func() {
			text, err := runItem(f.ctx, f.steps, it.ID, task)
			f.done <- itemDone{i, text, err}
		}()
	}
}

// finish records an item's worker returning: completed, queued again for
// a retry, or failed once it has failed retryCap times. An item cut short
// by ctx ending stays as it was.
func (f *fanOut) finish(d itemDone) {
	f.running = slices.DeleteFunc(f.running, func(j int) bool { return j == d.i })
	if d.err == nil && strings.TrimSpace(d.text) == "" {
		d.err = errors.New("the worker gave an empty answer")
	}
	if d.err != nil && f.ctx.Err() != nil {
		return // cut short: the item stays as it was
	}
	it := &f.p.Items[d.i]
	res := f.ran[d.i]
	if res == nil {
		res = &ItemResult{ID: it.ID, Content: it.Content}
		f.ran[d.i] = res
	}
	finishedEvent := map[string]any{"step": it.ID}
	var out Outcome
	switch {
	case d.err == nil:
		res.Status, res.Result, res.Error = Completed, cut(strings.TrimSpace(d.text)), ""
		finishedEvent["status"] = Completed
		out = record(f.p, d.i, Completed, evidenceOf(d.text))
	case it.Attempts+1 < f.retryCap:
		out = f.retry(d, it, res, finishedEvent)
	default:
		it.Attempts++
		res.Status, res.Error = ItemFailed, d.err.Error()
		finishedEvent["status"], finishedEvent["error"] = ItemFailed, d.err.Error()
		out = record(f.p, d.i, ItemFailed, "error: "+d.err.Error())
	}
	res.Attempts = it.Attempts
	if d.err == nil {
		res.Attempts++ // the attempt that succeeded
	}
	f.steps.Emit(stream.New(EventStepFinished, finishedEvent))
	f.changed()
	if out.Stop {
		f.stop("the plan paused (" + f.p.PauseReason + ")")
	}
}

// retry counts a failed attempt of item d.i and queues it again, before
// the items not started yet; the item goes back to pending when the plan
// stopped running.
func (f *fanOut) retry(d itemDone, it *Item, res *ItemResult, finishedEvent map[string]any) Outcome {
	it.Attempts++
	res.Error = d.err.Error()
	f.p.revise("harness", d.err.Error(), fmt.Sprintf("step %s: retry (attempt %d of %d)", it.ID, it.Attempts, f.retryCap))
	finishedEvent["status"], finishedEvent["error"], finishedEvent["retry"] = ItemFailed, d.err.Error(), true
	f.queue = append([]int{d.i}, f.queue...) // again, before the items not started yet
	out := MarkRunning(f.p, f.running)
	if f.p.State != Running {
		it.Status = Pending
	}
	return out
}

// record is MarkStep for an item that ended, also once the plan stopped
// running (a pause while it ran): it keeps its result, and the plan
// settles when it runs again.
func record(p *Plan, i int, status Status, evidence string) Outcome {
	if p.State == Running {
		return MarkStep(p, i, status, evidence)
	}
	it := &p.Items[i]
	it.Status, it.Evidence = status, strings.TrimSpace(evidence)
	p.revise("harness", "", fmt.Sprintf("step %s %s while the plan was %s", it.ID, status, p.State))
	return Outcome{}
}

// runItem runs one item on a worker, turning a panic into an error.
func runItem(ctx context.Context, steps capabilities.StepRunner, id, task string) (text string, err error) {
	defer func() {
		if v := recover(); v != nil {
			text, err = "", fmt.Errorf("the worker panicked: %v", v)
		}
	}()
	return steps.RunStep(ctx, id, capabilities.StepTarget{}, task)
}

// itemTask is what the worker running item i is asked: the item, with the
// plan's goal for context.
func itemTask(p *Plan, i int) string {
	var b strings.Builder
	if p.Goal != "" {
		fmt.Fprintf(&b, "Goal of the plan: %s\n", oneLine(p.Goal))
	}
	fmt.Fprintf(&b, "Your step (%d of %d): %s\nDo this step only and answer with its result.", i+1, len(p.Items), strings.TrimSpace(p.Items[i].Content))
	return b.String()
}

// evidenceOf is a worker's answer as item evidence: its first non-empty
// line, at most 200 runes.
func evidenceOf(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 200 {
				line = string(r[:200]) + "…"
			}
			return line
		}
	}
	return ""
}

// cut bounds a result handed back to the model to maxResult bytes.
func cut(s string) string {
	if len(s) <= maxResult {
		return s
	}
	n := maxResult
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf(" […cut: %d of %d bytes shown]", n, len(s))
}
