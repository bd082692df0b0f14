package planfirst

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// StepKind is the kind of the interrupt a plan-first run parks on after a
// finished step when its route's plan.md says advance: manual, as the agent
// loop's harness plan does (harness.StepKind); its detail is a StepDetail.
const StepKind = harness.StepKind

// StepDecisions are the answers a plan-first step interrupt takes:
// "continue", "skip" and "cancel" (or a cancelled answer). A plan-first
// plan's steps and their dependencies are fixed once it runs, so "revise"
// is refused.
var StepDecisions = []string{harness.StepContinue, harness.StepSkip, harness.StepCancel}

// StepSkippedReason is the reason recorded for a step a person skipped.
const StepSkippedReason = "a person skipped it"

// StepDetail is the detail of a plan-first step interrupt: the harness's
// step detail (the plan's goal, revision, state and progress; the plan item
// that finished, with its output's first line as result; the item the plan
// goes on with; the decisions) and the plan-first steps behind it.
type StepDetail struct {
	harness.StepDetail
	// Steps are the steps that ended since the run started or last
	// resumed, in plan order: one, or with parallel > 1 the step that
	// ended first and those that were running with it. Finished is the
	// last of them.
	Steps []StepEnd `json:"steps"`
	// NextSteps are the ids of the steps "continue" starts at once (up to
	// parallel steps whose dependencies ended); "skip" skips Next alone.
	NextSteps []string `json:"next_steps"`
}

// StepEnd is a step that ended: its id, task as run, status, and the first
// line of its output (Result) or its error.
type StepEnd struct {
	ID     string `json:"id"`
	Task   string `json:"task"`
	Status Status `json:"status"`
	Result string `json:"result,omitempty"`
	Err    string `json:"error,omitempty"`
}

// parkStep parks a run whose plan paused for a person after a step
// (advance: manual): the steps that ended are kept in the park data, so
// the resume runs the rest from their outputs without running them again
// or asking the planner.
func parkStep(host capabilities.RunHost, out capabilities.StrategyResult, plan *Plan, hp *harness.Plan, parallel int, prior Report, report Report) capabilities.StrategyResult {
	before := map[string]bool{}
	for _, r := range prior.Steps {
		before[r.Step.ID] = true
	}
	var done []StepResult
	var ended []StepEnd
	for _, r := range report.Steps {
		if r.Status == Skipped && !r.Decided {
			continue
		}
		done = append(done, r)
		if !before[r.Step.ID] {
			ended = append(ended, StepEnd{ID: r.Step.ID, Task: r.Task, Status: r.Status, Result: stepEvidence(r.Output), Err: r.Err})
		}
	}
	finished, next := -1, -1
	for i, it := range hp.Items {
		if next < 0 && it.Status == harness.Pending {
			next = i
		}
	}
	if len(ended) > 0 {
		finished = slices.IndexFunc(plan.Steps, func(s Step) bool { return s.ID == ended[len(ended)-1].ID })
	}
	doneN, total := hp.Progress()
	d := StepDetail{
		StepDetail: harness.StepDetail{
			Plan:      harness.StepPlan{Goal: hp.Goal, Revision: hp.RevisionN, State: hp.State, Done: doneN, Total: total},
			Decisions: StepDecisions,
		},
		Steps:     ended,
		NextSteps: nextSteps(plan, done, parallel),
	}
	if finished >= 0 && finished < len(hp.Items) {
		e := ended[len(ended)-1]
		result := e.Result
		if e.Err != "" {
			result = "error: " + e.Err
		}
		d.Finished = harness.StepItem{Position: finished + 1, Item: hp.Items[finished], Result: result}
	}
	if next >= 0 {
		d.Next = harness.StepItem{Position: next + 1, Item: hp.Items[next]}
	}
	in := capabilities.Interrupt{ID: "step-" + uuid.NewString(), Kind: StepKind, Detail: mustJSON(d)}
	out.Interrupts = []capabilities.Interrupt{in}
	out.Park = mustJSON(parked{Plan: plan, Done: done})
	if rec, ok := out.Record.(map[string]any); ok {
		rec["stopped"], rec["awaiting_step"] = false, true
	}
	return out
}

// nextSteps are the steps a resumed plan starts at once: in order, those
// not in done whose dependencies all are, up to parallel of them.
func nextSteps(plan *Plan, done []StepResult, parallel int) []string {
	ended := map[string]bool{}
	for _, r := range done {
		ended[r.Step.ID] = true
	}
	order := orderIndices(plan)
	waits := waitsOf(plan, order)
	next := []string{}
	for k, i := range order {
		id := plan.Steps[i].ID
		if ended[id] || len(next) >= max(parallel, 1) {
			continue
		}
		if !slices.ContainsFunc(waits[k], func(j int) bool { return !ended[plan.Steps[order[j]].ID] }) {
			next = append(next, id)
		}
	}
	return next
}

// resumeStep takes a person's answer to a step interrupt: "continue" runs
// the steps left from the saved results, "skip" first marks the next step
// skipped (the steps after it still run, as after a failed step), "cancel"
// (or a cancelled answer) cancels the plan and runs nothing. Neither the
// planner nor a step that ended runs again.
func (m marker) resumeStep(r capabilities.ParkedRun, saved parked) (capabilities.StrategyRun, error) {
	a, id := r.Answers[0], r.Interrupts[0].ID
	at := fmt.Sprintf("resume[0] (interrupt %s)", id)
	ans := harness.StepAnswer{Decision: harness.StepCancel}
	if a.Status != capabilities.AnswerCancelled {
		var err error
		if ans, err = harness.ParseStepAnswer(a.Payload); err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
	}
	if ans.Decision == harness.StepRevise {
		return nil, fmt.Errorf(`%s: a plan-first plan cannot be revised while it runs: its steps and their dependencies are fixed once it starts. Answer "continue", "skip" or "cancel"; to change the steps left, cancel and send a new message`, at)
	}
	p, parallel, plan := r.Route, m.parallelFor(r.Route), saved.Plan
	return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, _ []thread.Message) (capabilities.StrategyResult, error) {
		out := capabilities.StrategyResult{Messages: slices.Clip(history), Values: values}
		hp := &harness.Plan{}
		if err := json.Unmarshal(values[planning.PlanField], hp); err != nil || len(hp.Items) != len(plan.Steps) {
			return out, errors.New("plan-first: the parked plan's steps are not the thread's plan items any more; cancel the interrupt")
		}
		prior := Report{Goal: plan.Goal, Steps: slices.Clone(saved.Done)}
		if ans.Decision == harness.StepSkip {
			if i := slices.IndexFunc(hp.Items, func(it harness.Item) bool { return it.Status == harness.Pending }); i >= 0 {
				st := plan.Steps[i]
				prior.Steps = append(prior.Steps, StepResult{Step: st, Status: Skipped, Err: StepSkippedReason, Decided: true})
				host.Emit(stream.New(EventStepFinished, map[string]any{"step": st.ID, "status": Skipped, "error": StepSkippedReason}))
			}
		}
		o, err := harness.DecideStep(hp, ans)
		if err != nil {
			return out, err
		}
		next, err := p.Apply(out.Values, planning.PlanState(hp))
		if err != nil {
			return out, err
		}
		out.Values = next
		host.Emit(planning.PlanEvent(hp))
		if o.Event != "" {
			host.Emit(stream.New(o.Event, map[string]any{"state": hp.State, "pause_reason": hp.PauseReason, "reason": hp.Reason}))
		}
		if ans.Decision == harness.StepCancel {
			out.Stop = planning.StopCancelled
			out.Record = map[string]any{"decision": harness.StepCancel, "cancelled": true, "steps": len(saved.Done)}
			return out, host.Save(ctx, nil, out.Values)
		}
		res, err := runSteps(ctx, host, p, parallel, plan, hp, prior, out)
		if rec, ok := res.Record.(map[string]any); ok {
			rec["decision"] = ans.Decision
		}
		return res, err
	}, nil
}
