package contextwindow

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

// Name is the capability's name.
const Name = "context"

// configFile is the app's configuration file, where the app's default
// settings live.
const configFile = "dawn.yaml"

// Marker returns the context capability, with no app default: routes whose
// agent.md sets context: have it.
func Marker() capabilities.Marker { return marker{} }

// marker holds dawn.yaml's context section, the default of every route;
// nil when dawn.yaml has none or switches it off.
type marker struct{ app *Settings }

func (marker) Name() string { return Name }

// FrontMatterKeys claims the context key of agent.md
// (capabilities.FrontMatterSection).
func (marker) FrontMatterKeys() []string { return []string{Key} }

// ConfigKeys claims the context key of dawn.yaml
// (capabilities.ConfigSection).
func (marker) ConfigKeys() []string { return []string{Key} }

// Configure returns the marker with dawn.yaml's context section as the
// default of every route.
func (m marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	n := values[Key]
	if n == nil {
		return marker{}, nil
	}
	sec, err := parseSection(n)
	if err != nil {
		return nil, fmt.Errorf("line %d: %v", n.Line, err)
	}
	if sec.off {
		return marker{}, nil
	}
	s := sec.over(Defaults())
	return marker{app: &s}, nil
}

// Detect is not used: the capability's settings may come from dawn.yaml
// (see DetectRoute).
func (marker) Detect(string) (string, bool) { return "", false }

// DetectRoute switches the capability on for a route whose agent.md sets
// context: to anything but false or null, and, when dawn.yaml sets
// context:, for every route whose agent.md does not switch it off
// (capabilities.RouteDetector).
func (m marker) DetectRoute(route *router.Route) (string, bool) {
	if n := route.Agent.Sections[Key]; n != nil {
		sec, err := parseSection(n)
		return "agent.md", err != nil || !sec.off // Load reports the error
	}
	if m.app != nil {
		return filepath.Join(route.AppDir(), configFile), true
	}
	return "", false
}

// settings are the route's settings: dawn.yaml's (or the defaults) with
// the keys agent.md sets in their place.
func (m marker) settings(route *router.Route) (Settings, error) {
	base := Defaults()
	if m.app != nil {
		base = *m.app
	}
	n := route.Agent.Sections[Key]
	if n == nil {
		return base, nil
	}
	sec, err := parseSection(n)
	if err != nil {
		return base, fmt.Errorf("%s:%d: %v", route.Agent.File, n.Line, err)
	}
	return sec.over(base), nil
}

func (m marker) Load(_ context.Context, route *router.Route, file string) (*capabilities.Contribution, error) {
	s, err := m.settings(route)
	if err != nil {
		return nil, err
	}
	c := &capabilities.Contribution{Details: s, Hooks: &capabilities.Hooks{}}
	if s.MaxInputTokens > 0 || s.CompactTool {
		c.Fields = []capabilities.Field{{
			Name: Field, Type: "object", Schema: json.RawMessage(fieldSchema),
			Reducer: capabilities.Replace, Capability: Name, Source: file,
		}}
		cp := compactor{settings: s}
		c.Hooks.BeforeModel = cp.beforeModel
	}
	if s.CompactTool {
		c.Tools = append(c.Tools, compactTool{})
	}
	if s.ToolOutputMaxBytes > 0 {
		o := offload{max: s.ToolOutputMaxBytes}
		c.Hooks.ToolOutput = o.toolOutput
		c.Tools = append(c.Tools, o.readTool())
	}
	return c, nil
}
