package router

import (
	"path/filepath"
	"strings"
)

// Kinds of route.
const (
	KindAgent    = "agent"
	KindSubagent = "subagent"
)

// SegmentKind says how one segment of a route id matches a request path.
type SegmentKind int

// Segment kinds, from most to least specific.
const (
	Static           SegmentKind = iota // "support"
	Dynamic                             // "[tenant]": exactly one path segment
	CatchAll                            // "[...slug]": one or more path segments
	OptionalCatchAll                    // "[[...slug]]": zero or more path segments
)

// Segment is one part of a route id.
type Segment struct {
	Kind SegmentKind
	// Value is the literal text for Static, and the parameter name otherwise.
	Value string
}

// Agent is what agent.md says: its YAML front matter and its body.
type Agent struct {
	// File is the path of agent.md: absolute when Discover found it, else
	// the path given to ParseAgent.
	File        string
	Model       string `yaml:"model"`
	Description string `yaml:"description"`
	// Tools names the tools this route may use (tools: [names], or
	// tools.allow): nil when the key is absent or null, empty (not nil)
	// for "tools: []".
	Tools []string `yaml:"tools"`
	// MaxTurns is 0 when unset; never negative.
	MaxTurns int `yaml:"max_turns"`
	// Temperature is the sampling temperature sent with every model call of
	// the route, 0 to 2; nil when unset: then none is sent and the
	// provider's default applies.
	Temperature *float64 `yaml:"temperature"`
	// Approve names the tools whose every call waits for a person's
	// approval (the approval capability reads it): approve: and
	// tools.approve together.
	Approve []string `yaml:"approve"`
	// Deny names the tools the model never sees on this route
	// (tools.deny), the capabilities' included.
	Deny []string `yaml:"-"`
	// Sections holds the values of the front matter keys capabilities
	// claim (see Claims), by key; nil when there are none. A capability
	// parses its own section.
	Sections map[string]*Section `yaml:"-"`
	// Prompt is the Markdown body after the front matter: the system prompt.
	Prompt string `yaml:"-"`
}

// Route is one agent route: a folder under the app that holds agent.md.
type Route struct {
	// ID is the route's folder path from the app folder with groups dropped
	// and brackets kept: "/support/[tenant]". The app folder itself is "/".
	ID string
	// Dir is the route folder's path (the app folder joined with RelDir).
	Dir string
	// RelDir is the folder relative to the app folder, slash-separated, as
	// written on disk (groups included): "(marketing)/blog".
	RelDir string
	// Kind is KindAgent, or KindSubagent for a folder under a route's
	// "subagents/" folder.
	Kind string
	// Segments is ID split into its parts.
	Segments []Segment
	// Params names the dynamic, catch-all and optional catch-all segments
	// in order.
	Params []string
	// Agent is the parsed agent.md.
	Agent Agent
	// Parent is the id of the route whose subagents/ folder holds this
	// subagent; empty for an agent.
	Parent string
	// Subagents maps a subagent's name (its folder name) to its route id;
	// nil when the route has none.
	Subagents map[string]string
}

// AppDir returns the app folder the route was found in: Dir without
// RelDir. A route built by hand with no RelDir gives Dir.
func (r *Route) AppDir() string {
	if r.RelDir == "" {
		return r.Dir
	}
	rel := string(filepath.Separator) + filepath.FromSlash(r.RelDir)
	if dir, ok := strings.CutSuffix(filepath.Clean(r.Dir), rel); ok {
		return dir
	}
	return r.Dir
}
