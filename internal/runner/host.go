package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// loopHost is what a run lends its agent loop (agent.Host): the run's
// stream, its journal, its supervisor signals, the app's subagents and
// remembered values, and the run's strategy host as the tools' steps.
type loopHost struct {
	*journal
	m   *Manager
	run *Run
	a   *app.App
	// app reads the app's remembered values once, when a hook first asks.
	app   func() thread.State
	steps capabilities.StepRunner
}

var _ agent.Host = (*loopHost)(nil)

func newLoopHost(m *Manager, run *Run, a *app.App, j *journal) *loopHost {
	return &loopHost{journal: j, m: m, run: run, a: a, app: m.appValues(run)}
}

// Emit publishes e on the run's stream; a failed model call that is tried
// again is logged too.
func (h *loopHost) Emit(e stream.Event) {
	if e.Type == stream.TypeModelRetry || e.Type == stream.SubagentPrefix+stream.TypeModelRetry {
		h.m.logger.Warn("model call failed; trying again", "thread", h.run.ThreadID, "run", h.run.ID, "route", h.run.RouteID, "attempt", json.RawMessage(e.Data))
	}
	h.run.Log.Publish(e)
}

// Signal takes the supervisor's pending signal for the loop; a cancel is
// left to the run's context (see Run.takeSignal).
func (h *loopHost) Signal() string { return h.run.takeSignal() }

// Subagent resolves the subagent named name of route parent in the run's
// app, with its model.
func (h *loopHost) Subagent(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error) {
	id := parent.Route.Subagents[name]
	child, ok := h.a.Routes[id]
	if !ok {
		return nil, nil, "", fmt.Errorf("subagent %q (route %s) is broken and cannot run; run `dawn check` to see why", name, id)
	}
	spec := h.a.ModelFor(child.Route, h.m.env)
	model, err := h.m.Model(spec)
	if err != nil {
		return nil, nil, "", err
	}
	return child, model, spec, nil
}

// App returns the app's remembered values.
func (h *loopHost) App() thread.State { return h.app() }

// Steps returns the run's step runner for the route's tools.
func (h *loopHost) Steps() capabilities.StepRunner { return h.steps }

// Items returns the store's key-value store for the route's tools.
func (h *loopHost) Items() capabilities.ItemStore { return items{h.m.items} }

// appValues returns the app-wide values for run's hooks, read from the
// store the first time a hook asks. A store that cannot read them gives
// none: a tool a person allowed "always" then asks again, which is safe.
func (m *Manager) appValues(run *Run) func() thread.State {
	return sync.OnceValue(func() thread.State {
		values, err := m.values.AppValues(context.Background())
		if err != nil {
			m.logger.Error("cannot read the app's remembered decisions; they count as none for this run", "thread", run.ThreadID, "run", run.ID, "err", err)
			return thread.State{}
		}
		return rememberedFor(values, run.user)
	})
}
