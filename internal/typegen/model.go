package typegen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/router"
)

// model is an app as the generators see it: every route with its names
// decided, and every named type.
type model struct {
	routes []*routeModel
	types  *typeBuilder
	// shared is how many of types.decls are shared by every route: the
	// types capabilities contribute (planning's Todo).
	shared int
	// consts are the const blocks capabilities contribute, written before
	// the shared types in the Go output.
	consts []capabilities.TypegenType
	// catchAll says some route has a catch-all param, so the Go output needs
	// its escapeParts helper.
	catchAll bool
}

// routeModel is one route with the names of its generated identifiers.
type routeModel struct {
	route       *router.Route
	id          string
	description string
	slug        string
	constName   string // RouteSupportTenant
	paramsType  string // SupportTenantParams; "" for a route without params
	params      []paramModel
	stateType   string // SupportTenantState
	toolsType   string // SupportTenantTools (TypeScript)
	inputType   string // SupportTenantInput (TypeScript)
	waitMethod  string // WaitSupportTenant
	tools       []toolModel
	fields      []capabilities.Field // sorted by name
	// decls are the indexes into model.types.decls of the route's types.
	declStart, declEnd int
}

// paramModel is one dynamic segment of a route.
type paramModel struct {
	name   string
	goName string
	kind   router.SegmentKind
}

// toolModel is one tool of a route.
type toolModel struct {
	name        string
	description string
	schema      json.RawMessage
	inputType   string
}

// contributedTypes returns the types the markers of a (a.Config.Markers)
// contribute to every app's code (capabilities.TypegenContributor), in
// marker order.
func contributedTypes(a *app.App) []capabilities.TypegenType {
	if a == nil {
		return nil
	}
	var types []capabilities.TypegenType
	for _, m := range a.Config.Markers {
		if c, ok := m.(capabilities.TypegenContributor); ok {
			types = append(types, c.TypegenTypes()...)
		}
	}
	return types
}

// buildModel names everything the generators write for a, in phases:
// the types the markers contribute, the route-level names of every route,
// then each route's tool input and state types.
func buildModel(a *app.App) (*model, error) {
	m, names, err := declareContributed(contributedTypes(a))
	if err != nil {
		return nil, err
	}
	// Route-level names first, for every route, so that a type nested in one
	// route's tool input never takes a name a route needs.
	bases := newNamer("", false)
	slugs := newNamer("-", true)
	for _, p := range preparedRoutes(a) {
		rm := nameRoute(p, names, bases.unique(routeName(p.Route)), slugs)
		m.catchAll = m.catchAll || hasCatchAll(rm)
		m.routes = append(m.routes, rm)
	}
	for _, rm := range m.routes {
		if err := m.declareRoute(rm); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// declareContributed starts the model with the contributed types, and the
// namer every other name comes from, which has the fixed names and the
// contributed constants reserved.
func declareContributed(contributed []capabilities.TypegenType) (*model, *namer, error) {
	reserved := staticNames()
	for _, t := range contributed {
		for _, c := range t.Consts {
			reserved = append(reserved, c.Name)
		}
	}
	names := newNamer("", false, reserved...)
	m := &model{types: &typeBuilder{names: names, known: map[string]string{}}}
	for _, t := range contributed {
		if got := names.unique(t.Name); got != t.Name {
			return nil, nil, fmt.Errorf("a capability contributes type %s, a name typegen already uses", t.Name)
		}
		if err := m.types.declareKnown(t.Name, t.Schema, t.Doc); err != nil {
			return nil, nil, err
		}
		if len(t.Consts) > 0 {
			m.consts = append(m.consts, t)
		}
	}
	m.shared = len(m.types.decls)
	return m, names, nil
}

// preparedRoutes returns a's prepared routes sorted by id.
func preparedRoutes(a *app.App) []*capabilities.Prepared {
	if a == nil {
		return nil
	}
	var prepared []*capabilities.Prepared
	for _, id := range slices.Sorted(maps.Keys(a.Routes)) {
		prepared = append(prepared, a.Routes[id])
	}
	return prepared
}

// nameRoute names the route-level declarations of p: its constant, state,
// tools and input types, its params and its tools' input types.
func nameRoute(p *capabilities.Prepared, names *namer, base string, slugs *namer) *routeModel {
	r := p.Route
	rm := &routeModel{
		route:       r,
		id:          r.ID,
		description: firstLine(r.Agent.Description),
		slug:        slugs.unique(routeSlug(r.ID)),
		constName:   names.unique("Route" + base),
		stateType:   names.unique(base + "State"),
		toolsType:   names.unique(base + "Tools"),
		inputType:   names.unique(base + "Input"),
		waitMethod:  "Wait" + base,
	}
	// A subagent runs with its parent's params, and a request can name it
	// only by its id: it gets no Params type.
	if len(r.Params) > 0 && r.Kind != router.KindSubagent {
		rm.paramsType = names.unique(base + "Params")
		rm.params = routeParams(r)
	}
	for _, spec := range routeTools(p) {
		rm.tools = append(rm.tools, toolModel{
			name:        spec.Name,
			description: firstLine(spec.Description),
			schema:      spec.Schema,
			inputType:   names.unique(base + toolTypeName(spec.Name) + "Input"),
		})
	}
	rm.fields = slices.SortedFunc(slices.Values(p.Fields), func(a, b capabilities.Field) int { return strings.Compare(a.Name, b.Name) })
	return rm
}

// routeParams names the fields of a route's Params struct, one per
// dynamic or catch-all segment.
func routeParams(r *router.Route) []paramModel {
	var params []paramModel
	fields := newNamer("", false, "Path") // the method's name
	for _, seg := range r.Segments {
		if seg.Kind == router.Static {
			continue
		}
		goName := exportedName(seg.Value)
		if goName == "" {
			goName = "Param"
		}
		params = append(params, paramModel{name: seg.Value, goName: fields.unique(goName), kind: seg.Kind})
	}
	return params
}

// hasCatchAll reports whether rm has a catch-all param, for which the Go
// output needs escapeParts.
func hasCatchAll(rm *routeModel) bool {
	return slices.ContainsFunc(rm.params, func(p paramModel) bool { return p.kind != router.Dynamic })
}

// declareRoute declares the types of one route: each tool's input, then
// the state.
func (m *model) declareRoute(rm *routeModel) error {
	rm.declStart = len(m.types.decls)
	for _, t := range rm.tools {
		doc := fmt.Sprintf("%s is the input of tool %s on route %s.", t.inputType, t.name, rm.id)
		if t.description != "" {
			doc += "\n\n" + t.description
		}
		if err := m.types.declareRoot(t.inputType, t.schema, doc); err != nil {
			return fmt.Errorf("route %s: tool %q: input schema: %v", rm.id, t.name, err)
		}
	}
	if err := m.declareState(rm); err != nil {
		return err
	}
	rm.declEnd = len(m.types.decls)
	return nil
}

// declareState declares the route's state struct: messages, then every
// state field by name.
func (m *model) declareState(rm *routeModel) error {
	messages := fieldDecl{
		json: "messages", goName: "Messages", required: true,
		doc: "Messages is the thread's conversation.",
		typ: typeRef{kind: kindArray, elem: &typeRef{kind: kindNamed, name: "Message"}},
	}
	props := make([]property, 0, len(rm.fields))
	for _, f := range rm.fields {
		s, err := m.types.parse(fieldSchema(f))
		if err != nil {
			return fmt.Errorf("route %s: state field %q (%s): schema: %v", rm.id, f.Name, f.Source, err)
		}
		props = append(props, property{name: f.Name, schema: s})
	}
	doc := fmt.Sprintf("%s is the state of a thread on route %s, as a run's final state values hold it.", rm.stateType, rm.id)
	d := m.types.declareStruct(rm.stateType, doc, []fieldDecl{messages}, props)
	for i, f := range rm.fields {
		if f.Capability == "" {
			continue
		}
		fd := &d.fields[i+1]
		note := fmt.Sprintf("Set by capability %s; a run's input cannot set it.", f.Capability)
		if fd.doc == "" {
			fd.doc = note
		} else {
			fd.doc = note + "\n\n" + fd.doc
		}
	}
	return nil
}

// fieldSchema is a state field's JSON Schema: its own, or {"type": Type}.
func fieldSchema(f capabilities.Field) json.RawMessage {
	if len(f.Schema) > 0 {
		return f.Schema
	}
	if f.Type == "" {
		return json.RawMessage(`true`)
	}
	raw, _ := json.Marshal(map[string]string{"type": f.Type})
	return raw
}

// routeTools returns the specs of every tool a model on the route sees,
// sorted by name: the route's tools and, for a route with subagents, the
// runtime's task tool.
func routeTools(p *capabilities.Prepared) []capabilities.ToolSpec {
	specs := make([]capabilities.ToolSpec, 0, len(p.Tools)+1)
	for _, t := range p.Tools {
		specs = append(specs, t.Spec())
	}
	if targets := agent.TaskTargets(p); len(targets) > 0 {
		specs = append(specs, agent.TaskToolSpec(targets))
	}
	slices.SortFunc(specs, func(a, b capabilities.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	return specs
}

// toolTypeName is the Go name part for a tool ("writeTodos" → "WriteTodos").
func toolTypeName(tool string) string {
	if n := exportedName(tool); n != "" {
		return n
	}
	return "Tool"
}
