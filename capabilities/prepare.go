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

// ReservedToolNames are the names of the tools the runtime and Dawn's
// capabilities provide, or will: an app may register no tool with one of
// them, so that a capability switched on later never collides with it.
var ReservedToolNames = []string{
	"readFile", "writeFile", "editFile", "listDir", "glob",
	"readSkill", "readSkillFile", "remember", "recall",
	"readToolOutput", ReservedToolName, "writeTodos", "runBash",
}

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
	Fields []Field
	// Prompts are the system prompt's capability fragments, StatePrompts
	// the per-turn state block's (see Contribution), in marker order.
	Prompts      []Prompt
	StatePrompts []Prompt
	Transformers []Transformer
	Hooks        []*Hooks
	// RemoteSubagents are the capabilities' subagents that run outside the
	// app, by name (Contribution.RemoteSubagents).
	RemoteSubagents map[string]RemoteSubagent
	Capabilities    []Capability
	Warnings        []string
	// Notices are what the route's capabilities ask a server to log as
	// warnings when it starts (Contribution.Notices).
	Notices []string
	// owners maps each capability tool's name to the marker that
	// contributed it; a tool not in it is the app's.
	owners map[string]Marker
	// promptOwners and statePromptOwners hold, for each of Prompts and
	// StatePrompts, the marker that contributed it.
	promptOwners      []Marker
	statePromptOwners []Marker
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
	b := &preparation{route: route, in: in, p: &Prepared{Route: route}}
	b.appTools()
	userFields, err := LoadStateFile(route.Dir)
	if err != nil {
		b.errs = append(b.errs, &Error{Route: route.ID, Msg: err.Error()})
	}
	b.p.Fields = append(b.p.Fields, userFields...)
	for _, m := range in.Markers {
		b.marker(ctx, m)
	}
	b.denied()
	b.toolsList()
	if len(b.errs) == 0 {
		for _, c := range b.validates {
			for _, msg := range c.fn(b.p) {
				b.fail(c.name, "check", "%s", msg)
			}
		}
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	for _, c := range b.checks {
		for _, w := range c.fn(b.p) {
			b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("route %s: [%s] %s", route.ID, c.name, w))
		}
	}
	return b.p, nil
}

// preparation is one Prepare under way: the route being built and the
// problems found so far.
type preparation struct {
	route *router.Route
	in    Input
	p     *Prepared
	errs  []error
	// userTools are the app's tools the route keeps; capabilityTools the
	// names of the tools capabilities contributed.
	userTools       []AppTool
	capabilityTools []string
	// checks are the contributions' checks, run once the route is whole;
	// validates their Validate functions.
	checks, validates []contributionCheck
}

// contributionCheck is a contribution's Check, with its capability's name.
type contributionCheck struct {
	name string
	fn   func(*Prepared) []string
}

func (b *preparation) fail(capability, phase, format string, args ...any) {
	b.errs = append(b.errs, &Error{Route: b.route.ID, Capability: capability, Phase: phase, Msg: fmt.Sprintf(format, args...)})
}

// userTool returns the app's tool of the route named name, if any.
func (b *preparation) userTool(name string) (AppTool, bool) {
	i := slices.IndexFunc(b.userTools, func(u AppTool) bool { return u.Tool.Spec().Name == name })
	if i < 0 {
		return AppTool{}, false
	}
	return b.userTools[i], true
}

// appTools keeps the app's tools shared or scoped to the route, filtered
// by agent.md's tools list.
func (b *preparation) appTools() {
	allowed := b.route.Agent.Tools
	for _, t := range b.in.AppTools {
		name := t.Tool.Spec().Name
		if (t.Route != "" && t.Route != b.route.ID) || (len(allowed) > 0 && !slices.Contains(allowed, name)) {
			continue
		}
		if slices.Contains(ReservedToolNames, name) {
			b.fail("", "", "%s is named %q, which is reserved for Dawn's built-in tools (%s); rename the tool", t.origin(), name, strings.Join(ReservedToolNames, ", "))
			continue
		}
		if other, ok := b.userTool(name); ok {
			b.fail("", "", "%s and %s have the same name; rename one", other.origin(), t.origin())
			continue
		}
		b.userTools = append(b.userTools, t)
		b.p.Tools = append(b.p.Tools, t.Tool)
	}
}

// marker detects m in the route's folder and, when it is there, applies
// its contribution.
func (b *preparation) marker(ctx context.Context, m Marker) {
	name := m.Name()
	file, ok, err := detect(m, b.route)
	if err != nil {
		b.fail(name, "detect", "%v", err)
		return
	}
	if !ok {
		return
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(b.route.Dir, file)
	}
	c, err := load(ctx, m, b.route, path)
	if err != nil {
		b.fail(name, "load", "%v", err)
		return
	}
	where := fmt.Sprintf("capability %q (marker file %s)", name, path)
	for _, t := range c.Tools {
		b.capabilityTool(m, where, path, t)
	}
	for _, f := range c.Fields {
		b.capabilityField(name, where, path, f)
	}
	p := b.p
	p.Prompts = append(p.Prompts, c.Prompts...)
	for range c.Prompts {
		p.promptOwners = append(p.promptOwners, m)
	}
	p.StatePrompts = append(p.StatePrompts, c.StatePrompts...)
	for range c.StatePrompts {
		p.statePromptOwners = append(p.statePromptOwners, m)
	}
	p.Transformers = append(p.Transformers, c.Transformers...)
	if c.Hooks != nil {
		p.Hooks = append(p.Hooks, c.Hooks)
	}
	b.remoteSubagents(name, path, c.RemoteSubagents)
	p.Capabilities = append(p.Capabilities, Capability{Name: name, File: path, Details: c.Details})
	for _, w := range c.Warnings {
		p.Warnings = append(p.Warnings, fmt.Sprintf("route %s: [%s] %s", b.route.ID, name, w))
	}
	p.Notices = append(p.Notices, c.Notices...)
	if c.Check != nil && b.in.AppToolsKnown {
		b.checks = append(b.checks, contributionCheck{name, c.Check})
	}
	if c.Validate != nil && b.in.AppToolsKnown {
		b.validates = append(b.validates, contributionCheck{name, c.Validate})
	}
}

// remoteSubagents adds the subagents capability name contributes from
// the marker file path, unless a subagent folder of the route or another
// capability has one of their names.
func (b *preparation) remoteSubagents(name, path string, subs map[string]RemoteSubagent) {
	for _, sub := range slices.Sorted(maps.Keys(subs)) {
		if id, ok := b.route.Subagents[sub]; ok {
			b.fail(name, "conflict", "%s names subagent %q, and so does the subagent route %s; keep one", path, sub, id)
			continue
		}
		if _, ok := b.p.RemoteSubagents[sub]; ok {
			b.fail(name, "apply", "%s names subagent %q, which another capability already gives", path, sub)
			continue
		}
		if b.p.RemoteSubagents == nil {
			b.p.RemoteSubagents = map[string]RemoteSubagent{}
		}
		b.p.RemoteSubagents[sub] = subs[sub]
	}
}

// capabilityTool adds tool t, which marker m contributes from the marker
// file path, unless the app, another capability or the runtime has a tool
// of its name.
func (b *preparation) capabilityTool(m Marker, where, path string, t Tool) {
	name, tn := m.Name(), t.Spec().Name
	if other, ok := b.userTool(tn); ok {
		b.fail(name, "conflict", "%s contributes tool %q, and %s has the same name; rename your tool or remove %s", where, tn, other.origin(), filepath.Base(path))
		return
	}
	if tn == ReservedToolName || slices.Contains(b.capabilityTools, tn) {
		b.fail(name, "apply", "%s contributes tool %q, which another capability or the runtime already provides", where, tn)
		return
	}
	b.capabilityTools = append(b.capabilityTools, tn)
	b.p.Tools = append(b.p.Tools, t)
	if b.p.owners == nil {
		b.p.owners = map[string]Marker{}
	}
	b.p.owners[tn] = m
}

// capabilityField adds state field f, which capability name contributes
// from the marker file path, unless state.yaml or another capability
// declares a field of its name.
func (b *preparation) capabilityField(name, where, path string, f Field) {
	f.Capability = name
	if f.Source == "" {
		f.Source = path
	}
	i := slices.IndexFunc(b.p.Fields, func(g Field) bool { return g.Name == f.Name })
	if i < 0 {
		b.p.Fields = append(b.p.Fields, f)
		return
	}
	other := b.p.Fields[i]
	if other.Capability == "" {
		b.fail(name, "conflict", "%s contributes state field %q, which %s also declares; remove the field from %s or remove %s", where, f.Name, other.Source, filepath.Base(other.Source), filepath.Base(path))
	} else {
		b.fail(name, "apply", "%s contributes state field %q, which capability %q already contributes", where, f.Name, other.Capability)
	}
}

// denied removes the tools agent.md's tools.deny names, the app's and the
// capabilities' alike. A name that is no tool of the route is an error
// when the app's tools are known, else a warning; a built-in tool's name
// is fine, as the capability that gives it may be off.
func (b *preparation) denied() {
	route := b.route
	for _, name := range route.Agent.Deny {
		i := slices.IndexFunc(b.p.Tools, func(t Tool) bool { return t.Spec().Name == name })
		if i >= 0 {
			b.p.Tools = slices.Delete(b.p.Tools, i, i+1)
			delete(b.p.owners, name)
			continue
		}
		if slices.Contains(ReservedToolNames, name) || b.deniedAppTool(name) {
			continue
		}
		msg := fmt.Sprintf("%s lists tool %q in tools.deny, but the route has no such tool; fix the name or remove it from the list", route.Agent.File, name)
		if b.in.AppToolsKnown {
			b.errs = append(b.errs, &Error{Route: route.ID, Msg: msg})
		} else {
			b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("route %s: %s (ignore this if the app registers it in Go: run the app's own binary to check)", route.ID, msg))
		}
	}
}

// deniedAppTool reports whether name is an app tool of the route that
// tools.allow left out: denying it too is redundant, not a mistake.
func (b *preparation) deniedAppTool(name string) bool {
	return slices.ContainsFunc(b.in.AppTools, func(t AppTool) bool {
		return t.Tool.Spec().Name == name && (t.Route == "" || t.Route == b.route.ID)
	})
}

// toolsList checks that every tool agent.md's tools list names is there:
// an error when the app's tools are known, else a warning.
func (b *preparation) toolsList() {
	route := b.route
	for _, want := range route.Agent.Tools {
		if b.p.Tool(want) != nil || slices.Contains(route.Agent.Deny, want) || (want == ReservedToolName && len(route.Subagents) > 0) {
			continue
		}
		msg := fmt.Sprintf("%s lists tool %q in tools:, but no such tool is registered; register it with dawn.Tool or dawn.RouteTool, or remove it from the list", route.Agent.File, want)
		if b.in.AppToolsKnown {
			b.errs = append(b.errs, &Error{Route: route.ID, Msg: msg})
		} else {
			b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("route %s: %s (ignore this if the app registers it in Go: run the app's own binary to check)", route.ID, msg))
		}
	}
}

func detect(m Marker, route *router.Route) (file string, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if rd, is := m.(RouteDetector); is {
		file, ok = rd.DetectRoute(route)
		return file, ok, nil
	}
	file, ok = m.Detect(route.Dir)
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

// AppTools returns the names of the route's app tools (registered by the
// app, not contributed by a capability), in the order of Tools.
func (p *Prepared) AppTools() []string {
	var names []string
	for _, t := range p.Tools {
		if name := t.Spec().Name; p.owners[name] == nil {
			names = append(names, name)
		}
	}
	return names
}

// Worker returns the route as a worker of a RunStrategy sees it (see
// WorkerFilter): its prompt, state fields and app tools and, of the
// capabilities, only the tools a WorkerFilter keeps and the prompt
// fragments (Prompts and StatePrompts) of a WorkerPrompter. p is not
// changed.
func (p *Prepared) Worker() *Prepared {
	w := *p
	w.Transformers, w.Hooks, w.Tools = nil, nil, nil
	w.Prompts, w.promptOwners = workerPrompts(p.Prompts, p.promptOwners)
	w.StatePrompts, w.statePromptOwners = workerPrompts(p.StatePrompts, p.statePromptOwners)
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

// workerPrompts keeps of prompts, each contributed by the marker of the
// same index in owners, those a worker keeps (see WorkerPrompter).
func workerPrompts(prompts []Prompt, owners []Marker) (kept []Prompt, keptOwners []Marker) {
	for i, render := range prompts {
		if i < len(owners) {
			if k, ok := owners[i].(WorkerPrompter); ok && k.WorkerKeepsPrompts() {
				kept = append(kept, render)
				keptOwners = append(keptOwners, owners[i])
			}
		}
	}
	return kept, keptOwners
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

// ApplyEdit is Apply for a person's change of the state outside a run (a
// state update): the route's Edited hooks then see the change, in marker
// order, and what they return is applied with it.
func (p *Prepared) ApplyEdit(s thread.State, update thread.State) (thread.State, error) {
	next, err := p.Apply(s, update)
	if err != nil || len(update) == 0 {
		return next, err
	}
	for _, h := range p.Hooks {
		if h.Edited == nil {
			continue
		}
		if next, err = p.Apply(next, h.Edited(s, next)); err != nil {
			return s, err
		}
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
