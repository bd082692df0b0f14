package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

// Name is the capability's name.
const Name = "workspace"

// Key is the agent.md front matter key that switches the capability on.
const Key = "workspace"

// Thread is the value of Key for the thread's virtual tree.
const Thread = "thread"

// example is the settings' shape, for error messages.
const example = `workspace: thread, workspace: _files (a folder), or workspace: {dir: _files, approve: ["*.go"]}`

// Marker returns the workspace capability.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// FrontMatterKeys claims the workspace key of agent.md
// (capabilities.FrontMatterSection).
func (marker) FrontMatterKeys() []string { return []string{Key} }

// Detect finds routes whose agent.md sets workspace: to anything but
// false or null.
func (marker) Detect(dir string) (string, bool) { return capabilities.FrontMatterOn(dir, Key) }

// Settings are a route's workspace settings as agent.md writes them.
type Settings struct {
	// Dir is the real folder, as written (relative to the app folder or
	// absolute); "" for the thread's virtual tree.
	Dir string `json:"dir,omitempty"`
	// Approve are the path globs whose writes wait for a person.
	Approve []string `json:"approve,omitempty"`
}

// ParseSettings reads the workspace section of agent.md: true or thread
// for the thread's tree, a folder, or a mapping {dir, approve}. An error
// says what to write.
func ParseSettings(n *yaml.Node) (Settings, error) {
	var s Settings
	n = yamldoc.Resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!bool" || n.Value == Thread {
			return s, nil
		}
		if n.ShortTag() != "!!str" || strings.TrimSpace(n.Value) == "" {
			return s, fmt.Errorf("front matter key %q must be %s", Key, example)
		}
		s.Dir = n.Value
		return s, nil
	case yaml.MappingNode:
		for k, v := range yamldoc.Pairs(n) {
			if err := s.set(k.Value, yamldoc.Resolve(v)); err != nil {
				return s, err
			}
		}
		return s, nil
	}
	return s, fmt.Errorf("front matter key %q must be %s", Key, example)
}

func (s *Settings) set(key string, v *yaml.Node) error {
	switch key {
	case "dir":
		if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
			return fmt.Errorf("%s.dir must be a folder (relative to the app folder, or absolute), or thread; like %s", Key, example)
		}
		if v.Value != Thread {
			s.Dir = v.Value
		}
	case "approve":
		var list []string
		if v.Kind != yaml.SequenceNode || v.Decode(&list) != nil {
			return fmt.Errorf("%s.approve must be a list of path globs, like approve: [\"*.go\", \"deploy/**\"]", Key)
		}
		for _, p := range list {
			if msg := validPattern(p); msg != "" {
				return fmt.Errorf("%s.approve: %s; write globs like \"*.go\" or \"deploy/**\"", Key, msg)
			}
		}
		s.Approve = list
	default:
		return fmt.Errorf("%s: unknown key %q; allowed keys are dir and approve, like %s", Key, key, example)
	}
	return nil
}

func (marker) Load(_ context.Context, route *router.Route, file string) (*capabilities.Contribution, error) {
	n := route.Agent.Sections[Key]
	if n == nil {
		return nil, fmt.Errorf("%s: front matter key %q is missing", route.Agent.File, Key)
	}
	s, err := ParseSettings(n)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", route.Agent.File, n.Line+1, err)
	}
	sp := &space{approve: s.Approve, route: route.ID, now: time.Now}
	details := map[string]any{"workspace": Thread}
	if s.Dir != "" {
		if sp.dir, err = folder(route, s.Dir); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", route.Agent.File, n.Line+1, err)
		}
		details["workspace"] = "folder"
		details["dir"] = s.Dir
	}
	if len(s.Approve) > 0 {
		details["approve"] = s.Approve
	}
	c := &capabilities.Contribution{Tools: sp.tools(), Details: details}
	if s.Dir == "" {
		c.Fields = []capabilities.Field{{
			Name: Field, Type: "object", Default: json.RawMessage("{}"),
			Schema:  json.RawMessage(`{"type":"object","additionalProperties":{"type":"object","properties":{"content":{"type":"string"},"modified_at":{"type":"string","format":"date-time"}},"required":["content","modified_at"]}}`),
			Reducer: capabilities.Replace, Capability: Name, Source: file,
		}}
	}
	if len(s.Approve) > 0 {
		c.Hooks = &capabilities.Hooks{BeforeTool: sp.beforeTool, Resolve: sp.resolve}
	}
	return c, nil
}

// folder resolves the workspace folder dir of route: relative to the app
// folder, or absolute. A folder inside the app folder must sit in one
// whose name starts with "_" or ".", which route discovery skips, so that
// an agent.md the model writes never becomes a route.
func folder(route *router.Route, dir string) (string, error) {
	app := appDir(route)
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(app, filepath.FromSlash(dir))
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(app, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs, nil // outside the app folder
	}
	for seg := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(seg, "_") || (strings.HasPrefix(seg, ".") && seg != ".") {
			return abs, nil
		}
	}
	return "", fmt.Errorf("workspace folder %q is inside the app folder, where a file the model writes could become a route or a marker; name a folder starting with _ (route discovery skips it), e.g. _%s, or one outside the app", dir, filepath.Base(abs))
}

// appDir is the app folder of route: its Dir without its RelDir.
func appDir(route *router.Route) string {
	if route.RelDir == "" {
		return route.Dir
	}
	return strings.TrimSuffix(route.Dir, string(filepath.Separator)+filepath.FromSlash(route.RelDir))
}
