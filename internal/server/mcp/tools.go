package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/router"
)

// The arguments every tool takes beside the route's params and fields.
const (
	argMessage  = "message"
	argThreadID = "thread_id"
)

// ToolName is the MCP tool name of a route id: the id's segments without
// the leading slash, brackets and dots of dynamic segments dropped, joined
// with "_"; any character MCP does not allow in a name becomes "_". The
// app's root route "/" is "index".
//
//	/support/[tenant]   support_tenant
//	/docs/[...slug]     docs_slug
//	/blog-posts         blog-posts
func ToolName(id string) string {
	id = strings.Trim(id, "/")
	if id == "" {
		return "index"
	}
	parts := strings.Split(id, "/")
	for i, p := range parts {
		p = strings.TrimSuffix(strings.TrimPrefix(p, "[["), "]]")
		p = strings.TrimSuffix(strings.TrimPrefix(p, "["), "]")
		parts[i] = strings.TrimPrefix(p, "...")
	}
	name := []byte(strings.Join(parts, "_"))
	for i, c := range name {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			name[i] = '_'
		}
	}
	switch {
	case len(name) == 0:
		return "index"
	case len(name) > 128:
		name = name[:128]
	}
	return string(name)
}

// tool is one route served as an MCP tool.
type tool struct {
	name  string
	route *capabilities.Prepared
	// fields are the route's state.yaml fields, which a call may set.
	fields []capabilities.Field
	schema json.RawMessage
}

// toolsOf returns the app's tools, sorted by name: every route that is not
// a subagent and prepared cleanly. Two routes with one name, or a route
// whose param or state.yaml field has the name of another argument, are an
// error naming them.
func toolsOf(a *app.App) ([]*tool, error) {
	var tools []*tool
	byName := map[string]string{}
	var errs []string
	for _, id := range slices.Sorted(maps.Keys(a.Routes)) {
		p := a.Routes[id]
		if p.Route.Kind == router.KindSubagent {
			continue
		}
		t := &tool{name: ToolName(id), route: p}
		if other, ok := byName[t.name]; ok {
			errs = append(errs, fmt.Sprintf("routes %s and %s both have the MCP tool name %q: rename one route folder", other, id, t.name))
			continue
		}
		byName[t.name] = id
		if err := t.build(); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(x, y *tool) int { return strings.Compare(x.name, y.name) })
	if len(errs) > 0 {
		return tools, fmt.Errorf("serving routes as MCP tools: %s", strings.Join(errs, "; "))
	}
	return tools, nil
}

// build makes the tool's input schema: each route param a required
// string, each state.yaml field with its schema, a required message and an
// optional thread_id.
func (t *tool) build() error {
	props := map[string]any{
		argMessage:  map[string]any{"type": "string", "description": "The user message the route's agent answers."},
		argThreadID: map[string]any{"type": "string", "description": "A thread id from an earlier call's structured result, to continue that thread; without it the call starts a new thread."},
	}
	required := []string{argMessage}
	taken := func(name, what string) error {
		if _, ok := props[name]; ok {
			return fmt.Errorf("route %s: %s %q has the name of another argument of its MCP tool %s; rename it", t.route.Route.ID, what, name, t.name)
		}
		return nil
	}
	for _, seg := range t.route.Route.Segments {
		if seg.Kind == router.Static {
			continue
		}
		p := seg.Value
		if err := taken(p, "param"); err != nil {
			return err
		}
		props[p] = map[string]any{"type": "string", "description": "The route param " + p + " of " + t.route.Route.ID + "."}
		if seg.Kind != router.OptionalCatchAll {
			required = append(required, p)
		}
	}
	for _, f := range t.route.Fields {
		if f.Capability != "" {
			continue
		}
		if err := taken(f.Name, "state.yaml field"); err != nil {
			return err
		}
		var schema any = map[string]any{"type": f.Type}
		if len(f.Schema) > 0 {
			schema = f.Schema
		}
		props[f.Name] = schema
		t.fields = append(t.fields, f)
	}
	raw, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	if err != nil {
		return fmt.Errorf("route %s: MCP input schema: %w", t.route.Route.ID, err)
	}
	t.schema = raw
	return nil
}

// path is the concrete request path of the route with its params filled
// in from args, or an error naming the param that is missing or invalid.
func (t *tool) path(args map[string]json.RawMessage) (string, error) {
	var b strings.Builder
	for _, seg := range t.route.Route.Segments {
		if seg.Kind == router.Static {
			b.WriteString("/" + seg.Value)
			continue
		}
		var v string
		raw, ok := args[seg.Value]
		if seg.Kind == router.OptionalCatchAll && !ok {
			continue
		}
		if err := json.Unmarshal(raw, &v); err != nil || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("argument %q is required: a non-empty string, the route param %s of %s", seg.Value, seg.Value, t.route.Route.ID)
		}
		v = strings.Trim(v, "/")
		if seg.Kind == router.Dynamic && strings.Contains(v, "/") {
			return "", fmt.Errorf("argument %q is one path segment of %s and cannot hold '/': got %q", seg.Value, t.route.Route.ID, v)
		}
		b.WriteString("/" + v)
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}
