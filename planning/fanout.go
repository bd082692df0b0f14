package planning

import (
	"context"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
)

// fanOut runs the open items of a parallel plan (mode: parallel) that
// writeTodos just accepted, on workers of the route, and answers the call
// with the plan's progress and every item's result in plan order: the
// merged results the model writes its final answer from. Each change to
// the plan is sent as plan_update while the items run; the plan is saved
// with the step, as any writeTodos call's.
func (e *enforced) fanOut(ctx context.Context, steps capabilities.StepRunner, p *harness.Plan) (capabilities.Result, error) {
	report, err := harness.FanOut(ctx, steps, p, e.settings, func() { steps.Emit(PlanEvent(p)) })
	if err != nil {
		return capabilities.Result{}, err
	}
	done, total := p.Progress()
	out := map[string]any{"state": p.State, "done": done, "total": total, "results": report.Results}
	if p.PauseReason != "" {
		out["pause_reason"] = p.PauseReason
	}
	switch {
	case report.Stopped != "":
		out["note"] = "not every item ran: " + report.Stopped
	case len(report.Results) > 0:
		out["note"] = "the items ran on workers; their results are in plan order. Write the final answer from them"
	}
	return capabilities.Result{Output: mustJSON(out), Update: update(p)}, nil
}

// modeOf is plan.md's mode as `dawn routes --json` shows it.
func modeOf(s harness.Settings) string {
	if s.FanOut {
		return harness.ModeParallel
	}
	return s.Mode
}
