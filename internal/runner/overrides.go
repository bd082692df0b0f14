package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/models"
)

// Overrides change, for one run, what a route's agent.md sets: the
// model, the temperature, the tools the model may call (a subset of the
// route's) and the turn limit. The zero Overrides changes nothing. A wire
// fills them from what its client asks, such as a LangGraph assistant's
// configuration.
type Overrides struct {
	// Model is a model name such as "openai:gpt-4o-mini"; "" keeps the
	// route's.
	Model string
	// Temperature, when set, is sent with every model call, 0 to 2.
	Temperature *float64
	// Tools, when not nil, are the only tools of the route the model sees
	// (the subagents' "task" among them, when the route has subagents).
	Tools []string
	// MaxTurns, above 0, caps the run's model calls.
	MaxTurns int
	// PauseBeforeTools parks the run before each tools step's calls run;
	// PauseAfterTools parks it after each tools step, before the next
	// model turn. Their interrupts are of kind PauseKind.
	PauseBeforeTools, PauseAfterTools bool
}

// keptOverrides are Overrides as a run keeps them with its request (see
// keptRequest). Tools keeps the difference between no allow-list (null)
// and an empty one ([]).
type keptOverrides struct {
	Model            string   `json:"model,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty"`
	Tools            []string `json:"tools"`
	MaxTurns         int      `json:"max_turns,omitempty"`
	PauseBeforeTools bool     `json:"pause_before_tools,omitempty"`
	PauseAfterTools  bool     `json:"pause_after_tools,omitempty"`
}

// OverrideError is an override a route does not allow; Field names it
// ("model", "temperature", "tools", "max_turns").
type OverrideError struct {
	Route, Field, Msg string
}

func (e *OverrideError) Error() string {
	return fmt.Sprintf("%s: %s (route %s)", e.Field, e.Msg, e.Route)
}

// Check reports the first override p does not allow, as an
// *OverrideError.
func (o Overrides) Check(p *capabilities.Prepared) error {
	fail := func(field, format string, args ...any) error {
		return &OverrideError{Route: p.Route.ID, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if o.Model != "" {
		if _, err := models.ParseSpecList(o.Model); err != nil {
			return fail("model", "%v; name a model as provider:model, like openai:gpt-4o-mini", err)
		}
	}
	if t := o.Temperature; t != nil && (*t < 0 || *t > 2) {
		return fail("temperature", "must be a number from 0 to 2, not %v", *t)
	}
	if o.MaxTurns < 0 {
		return fail("max_turns", "must be a positive number of model turns, not %d", o.MaxTurns)
	}
	if o.Tools != nil {
		known := ToolNames(p)
		for i, name := range o.Tools {
			if !slices.Contains(known, name) {
				return fail("tools", "tools[%d] %q is not a tool of the route; it has %s", i, name, orNone(known))
			}
		}
	}
	return nil
}

// ToolNames are the names of the tools a run of p may call.
func ToolNames(p *capabilities.Prepared) []string {
	var names []string
	for _, t := range p.Tools {
		names = append(names, t.Spec().Name)
	}
	if len(agent.TaskTargets(p)) > 0 {
		names = append(names, capabilities.ReservedToolName)
	}
	return names
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// apply returns p as a run with o sees it; p is not changed.
func (o Overrides) apply(p *capabilities.Prepared) *capabilities.Prepared {
	if o.Model == "" && o.Temperature == nil && o.Tools == nil && o.MaxTurns == 0 && !o.PauseBeforeTools && !o.PauseAfterTools {
		return p
	}
	out := *p
	route := *p.Route
	out.Route = &route
	if o.Model != "" {
		route.Agent.Model = o.Model
	}
	if o.Temperature != nil {
		route.Agent.Temperature = o.Temperature
	}
	if o.MaxTurns > 0 {
		route.Agent.MaxTurns = o.MaxTurns
	}
	if o.Tools != nil {
		out.Tools = nil
		for _, t := range p.Tools {
			if slices.Contains(o.Tools, t.Spec().Name) {
				out.Tools = append(out.Tools, t)
			}
		}
		if !slices.Contains(o.Tools, capabilities.ReservedToolName) {
			route.Subagents, out.RemoteSubagents = nil, nil
		}
	}
	if o.PauseBeforeTools || o.PauseAfterTools {
		out.Hooks = append(p.Hooks[:len(p.Hooks):len(p.Hooks)], pauseHooks(o.PauseBeforeTools, o.PauseAfterTools))
	}
	return &out
}
