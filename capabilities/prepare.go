package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// ReservedToolName is the tool the runtime adds for subagents; an app may not
// register a tool with this name.
const ReservedToolName = "task"

// AppTool is a tool the app registers in Go, shared by every route or scoped
// to one route id.
type AppTool struct {
	Tool Tool
	// Route is the route id the tool is scoped to; empty means every route.
	Route string
	// Origin, when set, says where the tool comes from in errors, such as
	// an MCP server in dawn.yaml; empty means the app's Go code.
	Origin string
}

func (t AppTool) origin() string {
	if t.Origin != "" {
		return t.Origin
	}
	if t.Route == "" {
		return fmt.Sprintf("the app's shared tool %q (dawn.Tool)", t.Tool.Spec().Name)
	}
	return fmt.Sprintf("the app's tool %q scoped to %s (dawn.RouteTool)", t.Tool.Spec().Name, t.Route)
}

// Capability is one capability switched on for a prepared route.
type Capability struct {
	Name string `json:"name"`
	// File is the marker file's path.
	File    string `json:"file"`
	Details any    `json:"details,omitempty"`
}

// Prepared is a route with every contribution applied: what the runtime
// needs to run it.
type Prepared struct {
	Route *router.Route
	// Tools are the app's tools for the route, then capability tools in
	// marker order.
	Tools []Tool
	// Fields are the state.yaml fields, then capability fields.
	Fields       []Field
	Prompts      []Prompt
	Transformers []Transformer
	Hooks        []*Hooks
	Capabilities []Capability
	Warnings     []string
	// owners maps each capability tool's name to the marker that
	// contributed it; a tool not in it is the app's.
	owners map[string]Marker
}

// Input is what Prepare needs besides the route.
type Input struct {
	Markers []Marker
	// AppTools are every tool the app registers; Prepare keeps those shared
	// or scoped to the route and, when agent.md lists tools, only those.
	AppTools []AppTool
	// AppToolsKnown says AppTools is the app's full set. When false (the
	// stock CLI inspecting an app whose tools live in its Go code), names in
	// agent.md's tools list that match no tool are warnings, not errors.
	AppToolsKnown bool
}

// Error is a problem preparing one route. Phase is "detect", "load" or
// "apply" for a marker's own failure, and "conflict" for a collision
// between a capability and the app.
type Error struct {
	Route      string
	Capability string
	Phase      string
	Msg        string
}

func (e *Error) Error() string {
	if e.Capability == "" {
		return fmt.Sprintf("route %s: %s", e.Route, e.Msg)
	}
	if e.Phase == "conflict" {
		return fmt.Sprintf("route %s: capability conflict: %s", e.Route, e.Msg)
	}
	return fmt.Sprintf("route %s: [%s#%s] %s", e.Route, e.Capability, e.Phase, e.Msg)
}

// Prepare runs every marker for route in order, loads state.yaml, merges the
// contributions with the app's tools and checks for conflicts. All problems
// are returned together (joined), each an *Error naming the route, the
// capability, the marker file and the colliding definition. A marker that
// panics is reported like one that returns an error.
func Prepare(ctx context.Context, route *router.Route, in Input) (*Prepared, error) {
	p := &Prepared{Route: route}
	var errs []error
	fail := func(capability, phase, format string, args ...any) {
		errs = append(errs, &Error{Route: route.ID, Capability: capability, Phase: phase, Msg: fmt.Sprintf(format, args...)})
	}

	// User tools: shared or scoped to this route, filtered by agent.md.
	allowed := route.Agent.Tools
	var userTools []AppTool
	for _, t := range in.AppTools {
		if t.Route != "" && t.Route != route.ID {
			continue
		}
		if len(allowed) > 0 && !slices.Contains(allowed, t.Tool.Spec().Name) {
			continue
		}
		name := t.Tool.Spec().Name
		if name == ReservedToolName {
			fail("", "", "%s is named %q, which is reserved for subagents; rename the tool", t.origin(), ReservedToolName)
			continue
		}
		if i := slices.IndexFunc(userTools, func(u AppTool) bool { return u.Tool.Spec().Name == name }); i >= 0 {
			fail("", "", "%s and %s have the same name; rename one", userTools[i].origin(), t.origin())
			continue
		}
		userTools = append(userTools, t)
		p.Tools = append(p.Tools, t.Tool)
	}

	userFields, err := LoadStateFile(route.Dir)
	if err != nil {
		errs = append(errs, &Error{Route: route.ID, Msg: err.Error()})
	}
	p.Fields = append(p.Fields, userFields...)

	var capabilityTools []string
	type check struct {
		name string
		fn   func(*Prepared) []string
	}
	var checks []check
	for _, m := range in.Markers {
		name := m.Name()
		file, ok, err := detect(m, route.Dir)
		if err != nil {
			fail(name, "detect", "%v", err)
			continue
		}
		if !ok {
			continue
		}
		path := filepath.Join(route.Dir, file)
		c, err := load(ctx, m, route, path)
		if err != nil {
			fail(name, "load", "%v", err)
			continue
		}
		where := fmt.Sprintf("capability %q (marker file %s)", name, path)
		for _, t := range c.Tools {
			tn := t.Spec().Name
			if i := slices.IndexFunc(userTools, func(u AppTool) bool { return u.Tool.Spec().Name == tn }); i >= 0 {
				fail(name, "conflict", "%s contributes tool %q, and %s has the same name; rename your tool or remove %s", where, tn, userTools[i].origin(), filepath.Base(path))
				continue
			}
			if tn == ReservedToolName || slices.Contains(capabilityTools, tn) {
				fail(name, "apply", "%s contributes tool %q, which another capability or the runtime already provides", where, tn)
				continue
			}
			capabilityTools = append(capabilityTools, tn)
			p.Tools = append(p.Tools, t)
			if p.owners == nil {
				p.owners = map[string]Marker{}
			}
			p.owners[tn] = m
		}
		for _, f := range c.Fields {
			f.Capability = name
			if f.Source == "" {
				f.Source = path
			}
			if i := slices.IndexFunc(p.Fields, func(g Field) bool { return g.Name == f.Name }); i >= 0 {
				other := p.Fields[i]
				if other.Capability == "" {
					fail(name, "conflict", "%s contributes state field %q, which %s also declares; remove the field from %s or remove %s", where, f.Name, other.Source, filepath.Base(other.Source), filepath.Base(path))
				} else {
					fail(name, "apply", "%s contributes state field %q, which capability %q already contributes", where, f.Name, other.Capability)
				}
				continue
			}
			p.Fields = append(p.Fields, f)
		}
		p.Prompts = append(p.Prompts, c.Prompts...)
		p.Transformers = append(p.Transformers, c.Transformers...)
		if c.Hooks != nil {
			p.Hooks = append(p.Hooks, c.Hooks)
		}
		p.Capabilities = append(p.Capabilities, Capability{Name: name, File: path, Details: c.Details})
		for _, w := range c.Warnings {
			p.Warnings = append(p.Warnings, fmt.Sprintf("route %s: [%s] %s", route.ID, name, w))
		}
		if c.Check != nil && in.AppToolsKnown {
			checks = append(checks, check{name, c.Check})
		}
	}

	for _, want := range allowed {
		if p.Tool(want) != nil || (want == ReservedToolName && len(route.Subagents) > 0) {
			continue
		}
		msg := fmt.Sprintf("%s lists tool %q in tools:, but no such tool is registered; register it with dawn.Tool or dawn.RouteTool, or remove it from the list", route.Agent.File, want)
		if in.AppToolsKnown {
			errs = append(errs, &Error{Route: route.ID, Msg: msg})
		} else {
			p.Warnings = append(p.Warnings, fmt.Sprintf("route %s: %s (ignore this if the app registers it in Go: run the app's own binary to check)", route.ID, msg))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, c := range checks {
		for _, w := range c.fn(p) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("route %s: [%s] %s", route.ID, c.name, w))
		}
	}
	return p, nil
}

func detect(m Marker, dir string) (file string, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	file, ok = m.Detect(dir)
	return file, ok, nil
}

func load(ctx context.Context, m Marker, route *router.Route, path string) (c *Contribution, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	c, err = m.Load(ctx, route, path)
	if err == nil && c == nil {
		c = &Contribution{}
	}
	return c, err
}

// Tool returns the route's tool named name, or nil.
func (p *Prepared) Tool(name string) Tool {
	for _, t := range p.Tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

// Worker returns the route as a worker of a RunStrategy sees it (see
// WorkerFilter): its prompt, state fields and app tools and, of the
// capabilities, only the tools a WorkerFilter keeps. p is not changed.
func (p *Prepared) Worker() *Prepared {
	w := *p
	w.Prompts, w.Transformers, w.Hooks, w.Tools = nil, nil, nil, nil
	for _, t := range p.Tools {
		name := t.Spec().Name
		if m, owned := p.owners[name]; owned {
			if f, ok := m.(WorkerFilter); !ok || !f.WorkerKeeps(name) {
				continue
			}
		}
		w.Tools = append(w.Tools, t)
	}
	return &w
}

// Signal runs the route's Signal hooks on values, in marker order, for a
// supervisor's signal ("pause", "resume", "cancel"). It returns the state
// after them and their events; ok is false when no hook acted on the
// signal (none returned a state update that applies).
func (p *Prepared) Signal(values thread.State, signal string) (next thread.State, events []stream.Event, ok bool) {
	for _, h := range p.Hooks {
		if h.Signal == nil {
			continue
		}
		eff := h.Signal(values, signal)
		if eff.Update == nil {
			continue
		}
		applied, err := p.Apply(values, eff.Update)
		if err != nil {
			continue
		}
		values, ok = applied, true
		events = append(events, eff.Events...)
	}
	return values, events, ok
}

// Field returns the route's state field named name.
func (p *Prepared) Field(name string) (Field, bool) {
	for _, f := range p.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// InitialState is the state of a new thread on this route: every field's
// default.
func (p *Prepared) InitialState() thread.State {
	s := make(thread.State, len(p.Fields))
	for _, f := range p.Fields {
		if f.Default != nil {
			s[f.Name] = f.Default
		}
	}
	return s
}

// Apply returns s with update applied through each field's reducer. s is
// not modified. An update to a field the route does not have is an error
// naming the field.
func (p *Prepared) Apply(s thread.State, update thread.State) (thread.State, error) {
	if len(update) == 0 {
		return s, nil
	}
	next := s.Clone()
	for name, v := range update {
		f, ok := p.Field(name)
		if !ok {
			return s, fmt.Errorf("route %s has no state field %q; declare it in %s", p.Route.ID, name, StateFileName)
		}
		merged, err := f.Reduce(next[name], v)
		if err != nil {
			return s, err
		}
		next[name] = merged
	}
	return next, nil
}

// ApplyInput applies the state fields a run's input sets. Only fields
// declared in state.yaml may be set; a capability's field (such as todos) or
// an unknown field is an error naming it. Values must match the field type.
func (p *Prepared) ApplyInput(s thread.State, input map[string]json.RawMessage) (thread.State, error) {
	update := thread.State{}
	// Sorted, so that with several bad fields the same one is reported on
	// every run.
	for _, name := range slices.Sorted(maps.Keys(input)) {
		v := input[name]
		f, ok := p.Field(name)
		switch {
		case !ok:
			return s, fmt.Errorf("input.%s: route %s has no state field %q (declared fields: %s)", name, p.Route.ID, name, p.fieldNames())
		case f.Capability != "":
			return s, fmt.Errorf("input.%s: the field belongs to capability %q and cannot be set by a run's input", name, f.Capability)
		case string(v) == "null" || !jsonHasType(v, f.Type):
			return s, fmt.Errorf("input.%s: expected a value of type %s", name, f.Type)
		}
		update[name] = v
	}
	return p.Apply(s, update)
}

func (p *Prepared) fieldNames() string {
	var names []string
	for _, f := range p.Fields {
		if f.Capability == "" {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
