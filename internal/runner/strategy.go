package runner

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// strategy is the run strategy a run goes through before the agent loop.
type strategy struct {
	// option is the strategy's RunOption, the key of its part of the run's
	// record.
	option string
	run    capabilities.StrategyRun
	// marker is the strategy's marker, asked whether it can park.
	marker capabilities.RunStrategy
	// resumed says the run goes on from a run the strategy parked.
	resumed bool
}

// chooseStrategy asks each registered capabilities.RunStrategy, in marker
// order, whether the run on p goes through it, with the request's value
// for the strategy's option. The first that takes the run wins; nil means
// the plain agent loop.
func chooseStrategy(a *app.App, p *capabilities.Prepared, req Request) (*strategy, error) {
	for _, mk := range a.Config.Markers {
		rs, ok := mk.(capabilities.RunStrategy)
		if !ok {
			continue
		}
		option := rs.RunOption()
		run, err := rs.Choose(p, req.Options[option], req.Messages)
		if err != nil {
			return nil, &InputError{Msg: err.Error()}
		}
		if run != nil {
			return &strategy{option: option, run: run, marker: rs}, nil
		}
	}
	return nil, nil
}

// runHost is what a run lends its strategy (capabilities.RunHost) and, as
// a capabilities.StepRunner, the tools of its route.
type runHost struct {
	m   *Manager
	run *Run
	a   *app.App
	// cfg is the run's agent loop configuration; its steps run on copies.
	cfg agent.Config
	// loop is the run's agent.Host, whose journal Save saves through.
	loop *loopHost
	// saved counts the messages and the saves Save has checkpointed.
	saved, saves atomic.Int64
}

var _ capabilities.RunHost = (*runHost)(nil)

// Complete asks the run's model for one answer, with the route's prompt
// and no tools.
func (h *runHost) Complete(ctx context.Context, convo []thread.Message) (string, error) {
	return agent.Complete(ctx, h.cfg.Model, h.cfg.ModelName, h.cfg.Route.Route.Agent.Prompt, convo, h.cfg.SamplingOptions()...)
}

// Routes returns the app's other agent routes, sorted.
func (h *runHost) Routes() []string { return otherRoutes(h.a, h.cfg.Route.Route.ID) }

// otherRoutes returns the ids of a's agent routes other than id, sorted.
func otherRoutes(a *app.App, id string) []string {
	var routes []string
	for _, r := range a.Tree.Routes {
		if r.Kind == router.KindAgent && r.ID != id {
			routes = append(routes, r.ID)
		}
	}
	slices.Sort(routes)
	return routes
}

// RunStep runs one step on the route's subagent, another route, or else a
// worker of the run's route, forwarding the step's events as subagent
// events between subagent.start and subagent.end.
func (h *runHost) RunStep(ctx context.Context, callID string, step capabilities.StepTarget, task string) (string, error) {
	cfg := h.cfg
	target, name := cfg.Route.Worker(), "worker"
	model, modelName := cfg.Model, cfg.ModelName
	switch {
	case step.Subagent != "":
		child, mdl, spec, err := h.loop.Subagent(cfg.Route, step.Subagent)
		if err != nil {
			return "", err
		}
		target, name, model, modelName = child, step.Subagent, mdl, spec
	case step.Route != "":
		p, ok := h.a.Routes[step.Route]
		if !ok {
			return "", fmt.Errorf("route %s is broken and cannot run", step.Route)
		}
		spec := h.a.ModelFor(p.Route, h.m.env)
		mdl, err := h.m.Model(spec)
		if err != nil {
			return "", err
		}
		target, name, model, modelName = p, step.Route, mdl, spec
	}
	who := stream.Subagent{CallID: callID, Name: name, RouteID: target.Route.ID, Depth: 1}
	child := cfg
	child.Route, child.Model, child.ModelName = target, model, modelName
	// The step saves nothing, takes no signal and lends no steps.
	child.Host = agent.Delegate(h.loop, who)
	child.Depth, child.MaxTurns = 1, 0
	// Framed as a task tool's subagent is: Dawn's subagent.start and
	// subagent.end, no end when cancelled.
	h.run.Log.Publish(stream.SubagentStart(who))
	res, err := agent.Run(ctx, child, nil, target.InitialState(), []thread.Message{{Role: thread.RoleUser, Content: task}})
	if err != nil {
		if ctx.Err() == nil {
			h.run.Log.Publish(stream.SubagentEnd(who, "", err))
		}
		return "", err
	}
	h.run.Log.Publish(stream.SubagentEnd(who, res.Answer, nil))
	return res.Answer, nil
}

// Emit publishes e on the run's stream.
func (h *runHost) Emit(e stream.Event) { h.run.Log.Publish(e) }

// Save checkpoints added and values.
func (h *runHost) Save(ctx context.Context, added []thread.Message, values thread.State) error {
	if err := h.loop.Checkpoint(ctx, added, values); err != nil {
		return err
	}
	h.saved.Add(int64(len(added)))
	h.saves.Add(1)
	return nil
}

// Signal returns the supervisor's pending signal without taking it.
func (h *runHost) Signal() string { return h.run.pendingSignal() }
