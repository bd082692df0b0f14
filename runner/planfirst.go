package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/agent"
	"github.com/dawn-go/dawn/app"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/planfirst"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// planFirstPreview is the run option that plans without executing.
const planFirstPreview = "preview"

// planFirstMode decides whether a run plans first: "" for no, "always" to
// plan and execute, or "preview". The run's option wins over the route's
// plan.md front matter, which wins over dawn.yaml. Only routes whose plan
// the harness owns (enforce: true) can plan first.
func planFirstMode(a *app.App, p *capabilities.Prepared, req Request) (string, error) {
	settings, enforced := planning.SettingsOf(p)
	option := strings.ToLower(strings.TrimSpace(req.PlanFirst))
	if option != "" && !enforced {
		return "", &InputError{Msg: fmt.Sprintf("plan_first: route %s has no harness-owned plan; add enforce: true to the front matter of its plan.md to plan first", p.Route.ID)}
	}
	if !enforced {
		return "", nil
	}
	if option == planFirstPreview {
		return planFirstPreview, nil
	}
	modeText, threshold := a.Config.PlanFirst.Mode, a.Config.PlanFirst.Threshold
	if settings.Mode != "" {
		modeText = settings.Mode
	}
	if settings.Threshold > 0 {
		threshold = settings.Threshold
	}
	if option != "" {
		modeText = option
	}
	mode, err := planfirst.ParseMode(modeText)
	if err != nil {
		return "", &InputError{Msg: "plan_first: " + err.Error() + ", or preview"}
	}
	if planfirst.ShouldPlan(mode, threshold, lastUserText(req.Messages)) {
		return string(planfirst.Always), nil
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

// planFirstOutcome is what the plan-first phase hands to the agent loop.
type planFirstOutcome struct {
	// messages is the whole conversation so far: history, the input, the
	// plan and the report.
	messages []thread.Message
	values   thread.State
	report   *planfirst.Report
	preview  *planfirst.PreviewJSON
	// stopped is set when the plan paused or was cancelled between steps.
	stopped string
}

// runPlanFirst asks the model for a structured plan, validates it (sending
// the problems back once), turns its steps into the harness plan's items and
// executes them in order, each on its subagent, route or a plain worker of
// this route, saving a checkpoint after every step. The plan and the report
// are added to the conversation so the agent loop can write the answer.
func (m *Manager) runPlanFirst(ctx context.Context, run *Run, a *app.App, cfg agent.Config, mode string, history []thread.Message, values thread.State, input []thread.Message, save func(context.Context, []thread.Message, thread.State) error) (planFirstOutcome, error) {
	out := planFirstOutcome{messages: append(slices.Clip(history), input...), values: values}
	route := cfg.Route
	plan, err := m.askPlanner(ctx, a, cfg, lastUserText(input))
	if err != nil {
		return out, err
	}
	if mode == planFirstPreview {
		data := planfirst.PreviewData(plan)
		out.preview = &data
		run.Log.Publish(stream.New("plan_preview", map[string]any{"plan": plan, "order": data.Order, "text": planfirst.Preview(plan)}))
		return out, nil
	}

	settings, _ := planning.SettingsOf(route)
	seeds := make([]harness.Seed, len(plan.Steps))
	for i, st := range plan.Steps {
		seeds[i] = harness.Seed{Content: st.ID + ": " + st.Task}
	}
	if plan.Goal != "" {
		settings.Goal = plan.Goal
	}
	settings.Postconditions = postconditionsOf(values)
	hp, _ := harness.Start(nil, settings, seeds, true)
	planMsg := thread.Message{Role: thread.RoleAssistant, Content: plan.JSON(), Harness: true}
	out.messages = append(out.messages, planMsg)
	emitPlan := func() { run.Log.Publish(planning.PlanEvent(hp)) }
	setPlan := func() error {
		next, err := route.Apply(out.values, planning.PlanState(hp))
		out.values = next
		return err
	}
	if err := setPlan(); err != nil {
		return out, err
	}
	emitPlan()
	if err := save(ctx, append(slices.Clip(input), planMsg), out.values); err != nil {
		return out, err
	}

	index := map[string]int{}
	for i, st := range plan.Steps {
		index[st.ID] = i
	}
	var stopEvent string
	observe := func(ev planfirst.Event) error {
		i := index[ev.StepID]
		var o harness.Outcome
		switch ev.Status {
		case planfirst.InProgress:
			if sig := run.pendingSignal(); sig != "" {
				return fmt.Errorf("supervisor %s", sig)
			}
			if hp.Current() == i {
				return nil // the harness already started it when the last step ended
			}
			o = harness.MarkStep(hp, i, harness.InProgress, "")
		case planfirst.Completed:
			o = harness.MarkStep(hp, i, harness.Completed, firstLine(ev.Output))
		case planfirst.Failed:
			o = harness.MarkStep(hp, i, harness.ItemFailed, "error: "+ev.Err)
		default:
			return nil // skipped steps stay pending, so a resumed plan still shows them
		}
		if err := setPlan(); err != nil {
			return err
		}
		emitPlan()
		if o.Event != "" {
			run.Log.Publish(stream.New(o.Event, map[string]any{"state": hp.State, "pause_reason": hp.PauseReason, "reason": hp.Reason}))
		}
		if ev.Status != planfirst.InProgress {
			if err := save(ctx, nil, out.values); err != nil {
				return err
			}
		}
		if o.Stop {
			stopEvent = planning.StopPaused
			return planfirst.ErrStop
		}
		return nil
	}
	report := planfirst.Execute(ctx, plan, m.stepRunner(run, a, cfg), observe)
	out.report = &report
	if report.Stopped && ctx.Err() == nil {
		if stopEvent == "" { // the supervisor paused or cancelled between steps
			sig := run.takeSignal()
			if next, ok := m.applySignal(route, out.values, sig, func(e stream.Event) { run.Log.Publish(e) }); ok {
				out.values = next
			}
			stopEvent = planning.StopPaused
			if sig == "cancel" {
				stopEvent = planning.StopCancelled
			}
		}
		out.stopped = stopEvent
		return out, save(ctx, nil, out.values)
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	reportMsg := planfirst.Messages(plan, report)[1]
	out.messages = append(out.messages, reportMsg)
	return out, save(ctx, []thread.Message{reportMsg}, out.values)
}

// askPlanner gets a valid plan from the model, sending the problems back
// once when the first answer is not one.
func (m *Manager) askPlanner(ctx context.Context, a *app.App, cfg agent.Config, task string) (*planfirst.Plan, error) {
	route := cfg.Route
	var subagents []string
	for name := range route.Route.Subagents {
		subagents = append(subagents, name)
	}
	slices.Sort(subagents)
	var routes []string
	for _, r := range a.Tree.Routes {
		if r.Kind == router.KindAgent && r.ID != route.Route.ID {
			routes = append(routes, r.ID)
		}
	}
	convo := []thread.Message{{Role: thread.RoleUser, Content: planfirst.Directive(task, routes, subagents)}}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		text, err := agent.Complete(ctx, cfg.Model, cfg.ModelName, route.Route.Agent.Prompt, convo)
		if err != nil {
			return nil, err
		}
		plan, err := planfirst.Parse(text)
		if err == nil {
			err = planfirst.CheckTargets(plan, routes, subagents)
		}
		if err == nil {
			return plan, nil
		}
		lastErr = err
		convo = append(convo, thread.Message{Role: thread.RoleAssistant, Content: text}, thread.Message{Role: thread.RoleUser, Content: planfirst.Feedback(err)})
	}
	return nil, fmt.Errorf("plan-first: the model's plan was still invalid after one correction: %w", lastErr)
}

// stepRunner runs one step on its subagent, its route, or else a worker of
// the current route (the route's prompt and app tools, without the plan
// harness), forwarding the step's events as subagent events.
func (m *Manager) stepRunner(run *Run, a *app.App, cfg agent.Config) planfirst.Runner {
	return func(ctx context.Context, step planfirst.Step, task string) (string, error) {
		target, name := worker(cfg.Route), "worker"
		model, modelName := cfg.Model, cfg.ModelName
		switch {
		case step.Subagent != "":
			child, mdl, spec, err := cfg.Subagent(cfg.Route, step.Subagent)
			if err != nil {
				return "", err
			}
			target, name, model, modelName = child, step.Subagent, mdl, spec
		case step.Route != "":
			p, ok := a.Routes[step.Route]
			if !ok {
				return "", fmt.Errorf("route %s is broken and cannot run", step.Route)
			}
			spec := a.ModelFor(p.Route, m.env)
			mdl, err := m.Model(spec)
			if err != nil {
				return "", err
			}
			target, name, model, modelName = p, step.Route, mdl, spec
		}
		who := stream.Subagent{CallID: step.ID, Name: name, RouteID: target.Route.ID, Depth: 1}
		child := cfg
		child.Route, child.Model, child.ModelName = target, model, modelName
		child.Emit = func(e stream.Event) { run.Log.Publish(stream.Forward(e, who)) }
		child.Checkpoint, child.Signal, child.Depth, child.MaxTurns = nil, nil, 1, 0
		res, err := agent.Run(ctx, child, nil, target.InitialState(), []thread.Message{{Role: thread.RoleUser, Content: task}})
		if err != nil {
			return "", err
		}
		return res.Answer, nil
	}
}

// worker is route without the plan harness: the same prompt, fields and app
// tools, no planning tools, prompts, transformers or hooks.
func worker(p *capabilities.Prepared) *capabilities.Prepared {
	w := *p
	w.Prompts, w.Transformers, w.Hooks = nil, nil, nil
	w.Tools = nil
	for _, t := range p.Tools {
		switch t.Spec().Name {
		case planning.ToolName, planning.StepFailedTool, planning.VerifyTool:
		default:
			w.Tools = append(w.Tools, t)
		}
	}
	return &w
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

// firstLine is a step's output as item evidence: its first line, at most
// 200 runes.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
