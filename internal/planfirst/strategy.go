package planfirst

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// RunOption is the run request field that steers plan-first: "off",
// "auto", "always" or "preview" (plan without executing).
const RunOption = "plan_first"

// optionPreview is the RunOption value that plans without executing.
const optionPreview = "preview"

// EventPlanPreview is sent when a preview run parks: the plan, its order,
// its text as Preview renders it and the id of the interrupt it waits on.
const EventPlanPreview = "plan_preview"

// RunOption names the run request field that steers plan-first
// (capabilities.RunStrategy).
func (marker) RunOption() string { return RunOption }

// Choose decides whether a run on p plans first (capabilities.RunStrategy).
// The run's option wins over the route's plan.md front matter, which wins
// over dawn.yaml's plan_first. Only routes whose plan the harness owns
// (enforce: true) can plan first; asking for it elsewhere is an error.
func (m marker) Choose(p *capabilities.Prepared, option string, input []thread.Message) (capabilities.StrategyRun, error) {
	mode, err := m.planMode(p, option, input)
	if err != nil || mode == "" {
		return nil, err
	}
	return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
		return run(ctx, host, p, mode, m.parallelFor(p), history, values, input)
	}, nil
}

// parallelFor is how many independent steps run at once on p: plan.md's
// parallel, else dawn.yaml's, else DefaultParallel.
func (m marker) parallelFor(p *capabilities.Prepared) int {
	if settings, _ := planning.SettingsOf(p); settings.Parallel > 0 {
		return settings.Parallel
	}
	if m.parallel > 0 {
		return m.parallel
	}
	return DefaultParallel
}

// Events a plan-first run sends around each step it executes, with the
// step's id in "step". The events of the agent running a step reach the
// stream as subagent events whose id is the step's id too.
const (
	EventStepStarted  = "step_started"
	EventStepFinished = "step_finished"
)

// planMode is "" for no plan-first, "always" to plan and execute, or "preview".
func (m marker) planMode(p *capabilities.Prepared, option string, input []thread.Message) (string, error) {
	settings, enforced := planning.SettingsOf(p)
	option = strings.ToLower(strings.TrimSpace(option))
	if option != "" && !enforced {
		return "", fmt.Errorf("%s: route %s has no harness-owned plan; add enforce: true to the front matter of its plan.md to plan first", RunOption, p.Route.ID)
	}
	if !enforced {
		return "", nil
	}
	if option == optionPreview {
		return optionPreview, nil
	}
	modeText, threshold := m.mode, m.threshold
	if settings.Mode != "" {
		modeText = settings.Mode
	}
	if settings.Threshold > 0 {
		threshold = settings.Threshold
	}
	if option != "" {
		modeText = option
	}
	mode, err := ParseMode(modeText)
	if err != nil {
		return "", fmt.Errorf("%s: %v, or preview", RunOption, err)
	}
	if ShouldPlan(mode, threshold, lastUserText(input)) {
		return string(Always), nil
	}
	return "", nil
}

func lastUserText(msgs []thread.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == thread.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// run asks the model for a structured plan, validates it (sending the
// problems back once) and executes it (see execute). A preview, and a plan
// a person must approve (plan.md approval: required), parks the run with a
// plan interrupt instead; the resume runs the plan (see Resume).
func run(ctx context.Context, host capabilities.RunHost, p *capabilities.Prepared, mode string, parallel int, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
	out := capabilities.StrategyResult{Messages: append(slices.Clip(history), input...), Values: values}
	plan, err := askPlanner(ctx, host, p, lastUserText(input))
	if err != nil {
		return out, err
	}
	settings, _ := planning.SettingsOf(p)
	if mode == optionPreview || settings.Approval {
		return park(host, out, plan, mode == optionPreview), nil
	}
	return execute(ctx, host, p, parallel, plan, out, input)
}

// execute turns the plan's steps into the harness plan's items and
// executes them in order, each on its subagent, route or a worker of the
// route, saving a checkpoint after every step; up to parallel steps whose
// dependencies have ended run at once. The plan and the report are added
// to the conversation so the agent loop can write the answer. out holds
// the conversation so far and the state; input are the messages of it not
// saved yet.
func execute(ctx context.Context, host capabilities.RunHost, p *capabilities.Prepared, parallel int, plan *Plan, out capabilities.StrategyResult, input []thread.Message) (capabilities.StrategyResult, error) {
	values := out.Values
	settings, _ := planning.SettingsOf(p)
	seeds := make([]harness.Seed, len(plan.Steps))
	for i, st := range plan.Steps {
		seeds[i] = harness.Seed{Content: st.ID + ": " + st.Task}
	}
	if plan.Goal != "" {
		settings.Goal = plan.Goal
	}
	settings.Postconditions = postconditionsOf(values)
	hp, _ := harness.Start(nil, settings, seeds, true)
	// Under approval: required this plan is the one a person approved:
	// the agent loop's writeTodos does not ask again.
	hp.Approved = settings.Approval
	planMsg := harness.Mark(thread.Message{Role: thread.RoleAssistant, Content: plan.JSON()})
	out.Messages = append(out.Messages, planMsg)
	emitPlan := func() { host.Emit(planning.PlanEvent(hp)) }
	setPlan := func() error {
		next, err := p.Apply(out.Values, planning.PlanState(hp))
		out.Values = next
		return err
	}
	if err := setPlan(); err != nil {
		return out, err
	}
	emitPlan()
	if err := host.Save(ctx, append(slices.Clip(input), planMsg), out.Values); err != nil {
		return out, err
	}
	return runSteps(ctx, host, p, parallel, plan, hp, Report{}, out)
}

// runSteps runs the steps of plan that prior has not ended, with hp the
// harness plan whose items they are, and saves a checkpoint after every
// step. Under advance: manual the plan pauses for a person after a step
// ends: no further step starts, the steps already running end, and the run
// parks on a step interrupt (see parkStep), unless nothing is left to run.
// Once every step ended the report goes into the conversation.
func runSteps(ctx context.Context, host capabilities.RunHost, p *capabilities.Prepared, parallel int, plan *Plan, hp *harness.Plan, prior Report, out capabilities.StrategyResult) (capabilities.StrategyResult, error) {
	r := &stepRun{ctx: ctx, host: host, p: p, hp: hp, out: out, index: map[string]int{}}
	for i, st := range plan.Steps {
		r.index[st.ID] = i
	}
	runStep := func(ctx context.Context, step Step, task string) (string, error) {
		return host.RunStep(ctx, step.ID, capabilities.StepTarget{Subagent: step.Subagent, Route: step.Route}, task)
	}
	report := ResumeParallel(ctx, plan, prior, parallel, runStep, r.observe)
	r.out.Record = map[string]any{"had_errors": report.HadErrors, "stopped": report.Stopped, "steps": len(report.Steps)}
	switch {
	case report.Stopped && ctx.Err() == nil && harness.AwaitingStep(hp):
		return parkStep(host, r.out, plan, hp, parallel, prior, report), nil
	case report.Stopped && ctx.Err() == nil:
		return r.stopped()
	case ctx.Err() != nil:
		return r.out, ctx.Err()
	}
	reportMsg := Messages(plan, report)[1]
	r.out.Messages = append(r.out.Messages, reportMsg)
	return r.out, host.Save(ctx, []thread.Message{reportMsg}, r.out.Values)
}

// stepRun is runSteps' view of a plan-first run while its steps execute:
// it mirrors every step event onto the harness plan, the stream and the
// saved state.
type stepRun struct {
	ctx  context.Context
	host capabilities.RunHost
	p    *capabilities.Prepared
	hp   *harness.Plan
	out  capabilities.StrategyResult

	index      map[string]int // plan item of each step id
	running    []int          // plan items of the steps running now
	stopReason string         // set when the harness paused the plan
}

// observe is the Observer of the steps: it marks the step's plan item,
// sends the plan and step events, and saves after a step ends. It stops
// the plan when the supervisor signals or the harness pauses it.
func (r *stepRun) observe(ev Event) error {
	i := r.index[ev.StepID]
	var o harness.Outcome
	switch ev.Status {
	case InProgress:
		if sig := r.host.Signal(); sig != "" {
			return fmt.Errorf("supervisor %s", sig)
		}
		var started bool
		if o, started = r.started(ev, i); started {
			return nil // the harness already started it when the last step ended
		}
	case Completed, Failed:
		o = r.ended(ev, i)
	default:
		return nil // skipped steps stay pending, so a resumed plan still shows them
	}
	return r.publish(ev, o)
}

// started marks the item of a step that begins as running; it reports
// true when the harness had already started that item alone.
func (r *stepRun) started(ev Event, i int) (harness.Outcome, bool) {
	r.host.Emit(stream.New(EventStepStarted, map[string]any{"step": ev.StepID, "index": ev.Index, "total": ev.Total}))
	r.running = append(r.running, i)
	if slices.Equal(r.running, []int{r.hp.Current()}) {
		return harness.Outcome{}, true
	}
	return harness.MarkRunning(r.hp, r.running), false
}

// ended marks the item of a step that completed or failed, with its first
// output line or its error as evidence.
func (r *stepRun) ended(ev Event, i int) harness.Outcome {
	r.running = slices.DeleteFunc(r.running, func(j int) bool { return j == i })
	finished := map[string]any{"step": ev.StepID, "status": ev.Status}
	if ev.Err != "" {
		finished["error"] = ev.Err
	}
	r.host.Emit(stream.New(EventStepFinished, finished))
	if ev.Status == Completed {
		return harness.MarkStep(r.hp, i, harness.Completed, stepEvidence(ev.Output))
	}
	return harness.MarkStep(r.hp, i, harness.ItemFailed, "error: "+ev.Err)
}

// publish puts the plan into the state and the stream, sends the harness
// outcome's event, saves after a step ended, and stops the plan when the
// harness paused it.
func (r *stepRun) publish(ev Event, o harness.Outcome) error {
	next, err := r.p.Apply(r.out.Values, planning.PlanState(r.hp))
	r.out.Values = next
	if err != nil {
		return err
	}
	r.host.Emit(planning.PlanEvent(r.hp))
	if o.Event != "" {
		r.host.Emit(stream.New(o.Event, map[string]any{"state": r.hp.State, "pause_reason": r.hp.PauseReason, "reason": r.hp.Reason}))
	}
	if ev.Status != InProgress {
		if err := r.host.Save(r.ctx, nil, r.out.Values); err != nil {
			return err
		}
	}
	if o.Stop {
		r.stopReason = planning.StopPaused
		return ErrStop
	}
	return nil
}

// stopped ends a run whose plan stopped between steps: paused by the
// harness, or paused or cancelled by the supervisor, whose signal then
// applies to the plan.
func (r *stepRun) stopped() (capabilities.StrategyResult, error) {
	if r.stopReason == "" { // the supervisor paused or cancelled between steps
		sig := r.host.Signal()
		if next, events, ok := r.p.Signal(r.out.Values, sig); ok {
			r.out.Values = next
			for _, e := range events {
				r.host.Emit(e)
			}
		}
		r.stopReason = planning.StopPaused
		if sig == "cancel" {
			r.stopReason = planning.StopCancelled
		}
	}
	r.out.Stop = r.stopReason
	return r.out, r.host.Save(r.ctx, nil, r.out.Values)
}

// askPlanner gets a valid plan from the model, sending the problems back
// once when the first answer is not one.
func askPlanner(ctx context.Context, host capabilities.RunHost, p *capabilities.Prepared, task string) (*Plan, error) {
	var subagents []string
	for name := range p.Route.Subagents {
		subagents = append(subagents, name)
	}
	slices.Sort(subagents)
	routes := host.Routes()
	convo := []thread.Message{{Role: thread.RoleUser, Content: Directive(task, routes, subagents)}}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		text, err := host.Complete(ctx, convo)
		if err != nil {
			return nil, err
		}
		plan, err := Parse(text)
		if err == nil {
			err = CheckTargets(plan, routes, subagents)
		}
		if err == nil {
			return plan, nil
		}
		lastErr = err
		convo = append(convo, thread.Message{Role: thread.RoleAssistant, Content: text}, thread.Message{Role: thread.RoleUser, Content: Feedback(err)})
	}
	return nil, fmt.Errorf("plan-first: the model's plan was still invalid after one correction: %w", lastErr)
}

// postconditionsOf keeps the route's postconditions from the current plan.
func postconditionsOf(values thread.State) []string {
	var p harness.Plan
	if err := json.Unmarshal(values[planning.PlanField], &p); err != nil {
		return nil
	}
	out := make([]string, len(p.Postconditions))
	for i, pc := range p.Postconditions {
		out[i] = pc.Content
	}
	return out
}

// stepEvidence is a step's output as item evidence: its first line, at most
// 200 runes.
func stepEvidence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("planfirst: " + err.Error())
	}
	return raw
}
