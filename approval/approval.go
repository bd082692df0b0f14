// Package approval is the tool-approval capability: calls to the tools a
// route's agent.md lists under approve: wait for a person's decision. The
// run parks with a "tool" interrupt and goes on when POST
// /threads/:id/resume answers it with once, always, deny or an edit.
//
// dawn.yaml's permissions section sets the mode (interactive,
// non-interactive, bypass; DAWN_PERMISSIONS_MODE overrides it) and the
// tools always allowed or always denied.
package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"gopkg.in/yaml.v3"
)

// Name is the capability's name.
const Name = "approval"

// ConfigKey is the capability's dawn.yaml section.
const ConfigKey = "permissions"

// ModeEnv overrides the mode dawn.yaml sets.
const ModeEnv = "DAWN_PERMISSIONS_MODE"

// Kind is the kind of the interrupts the capability raises.
const Kind = "tool"

// Modes.
const (
	// Interactive parks the run and asks a person (the default).
	Interactive = "interactive"
	// NonInteractive denies every call that needs approval: no person is
	// there to ask.
	NonInteractive = "non-interactive"
	// Bypass runs every call without asking, for development and tests.
	// Denied tools stay denied.
	Bypass = "bypass"
)

// PreviewMax bounds detail.argsPreview, in characters.
const PreviewMax = 500

// agentFile is the route's agent.md, where approve: is written.
const agentFile = "agent.md"

// rememberKey is the app value that says a person chose "always" for tool.
func rememberKey(tool string) string { return "approval.always." + tool }

// Marker returns the approval capability with the default settings:
// interactive, nothing allowed or denied in advance.
func Marker() capabilities.Marker { return marker{mode: Interactive} }

type marker struct {
	mode        string
	allow, deny []string
}

func (marker) Name() string { return Name }

// Detect finds routes whose agent.md lists tools under approve:, and every
// route when dawn.yaml denies some tool.
func (m marker) Detect(dir string) (string, bool) {
	if len(m.deny) > 0 {
		return agentFile, true
	}
	data, err := os.ReadFile(filepath.Join(dir, agentFile))
	if err != nil {
		return "", false
	}
	// Other capabilities' keys were checked when the route was found.
	a, err := router.ParseAgentWith(filepath.Join(dir, agentFile), data, router.Claims{Any: true})
	if err != nil || len(a.Approve) == 0 {
		return "", false
	}
	return agentFile, true
}

func (m marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	g := &gate{mode: m.mode, approve: route.Agent.Approve, allow: m.allow, deny: m.deny}
	c := &capabilities.Contribution{
		Hooks:   &capabilities.Hooks{BeforeTool: g.beforeTool, Resolve: g.resolve},
		Details: map[string]any{"approve": g.approve, "mode": g.mode},
	}
	c.Check = func(p *capabilities.Prepared) []string {
		var warnings []string
		for _, name := range g.approve {
			if p.Tool(name) == nil && (route.Agent.Tools == nil || slices.Contains(route.Agent.Tools, name)) {
				warnings = append(warnings, fmt.Sprintf("%s lists %q under approve:, but the route has no such tool; fix the name or register the tool", route.Agent.File, name))
			}
		}
		return warnings
	}
	for _, name := range g.approve {
		if slices.Contains(m.deny, name) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s lists %q under approve:, but dawn.yaml's %s.deny.tool denies it, and deny wins: remove one of the two", route.Agent.File, name, ConfigKey))
		}
		if route.Agent.Tools != nil && !slices.Contains(route.Agent.Tools, name) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s lists %q under approve:, but its tools: list does not have it, so the route never calls it: fix the name or add it to tools:", route.Agent.File, name))
		}
	}
	return c, nil
}

// ConfigKeys names the capability's dawn.yaml section.
func (marker) ConfigKeys() []string { return []string{ConfigKey} }

// Configure reads dawn.yaml's permissions section, then ModeEnv from the
// process environment, which overrides the mode.
func (m marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	return m.configure(values[ConfigKey], os.Getenv(ModeEnv))
}

func (m marker) configure(section *yaml.Node, envMode string) (capabilities.Marker, error) {
	const example = "permissions: {mode: interactive, allow: {tool: [search]}, deny: {tool: [dropTable]}}"
	if section != nil && !yamldoc.IsNull(section) {
		if section.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s must be a mapping, like %s", ConfigKey, example)
		}
		for key, val := range yamldoc.Pairs(section) {
			switch key.Value {
			case "mode":
				if val.Kind != yaml.ScalarNode || !validMode(val.Value) {
					return nil, fmt.Errorf("%s.mode is %q; use interactive, non-interactive or bypass", ConfigKey, val.Value)
				}
				m.mode = val.Value
			case "allow", "deny":
				list, err := toolList(key.Value, val)
				if err != nil {
					return nil, err
				}
				if key.Value == "allow" {
					m.allow = list
				} else {
					m.deny = list
				}
			default:
				return nil, fmt.Errorf("%s: unknown key %q; allowed keys are mode, allow, deny, like %s", ConfigKey, key.Value, example)
			}
		}
	}
	if envMode != "" {
		if !validMode(envMode) {
			return nil, &capabilities.EnvError{Var: ModeEnv, Value: envMode, Want: "use interactive, non-interactive or bypass"}
		}
		m.mode = envMode
	}
	return m, nil
}

func validMode(s string) bool { return s == Interactive || s == NonInteractive || s == Bypass }

// toolList reads permissions.allow or permissions.deny: {tool: [names]}.
func toolList(which string, val *yaml.Node) ([]string, error) {
	want := fmt.Errorf("%s.%s must be {tool: [names]}, like %s: {tool: [deployProd]}", ConfigKey, which, which)
	if yamldoc.IsNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, want
	}
	var out []string
	for k, v := range yamldoc.Pairs(val) {
		if k.Value != "tool" {
			return nil, fmt.Errorf("%s.%s: unknown key %q; only tool is gated here, like %s: {tool: [deployProd]}", ConfigKey, which, k.Value, which)
		}
		var names []string
		if v.Kind != yaml.SequenceNode || v.Decode(&names) != nil {
			return nil, want
		}
		for _, n := range names {
			if strings.TrimSpace(n) == "" {
				return nil, fmt.Errorf("%s.%s.tool has an empty name", ConfigKey, which)
			}
		}
		out = names
	}
	return out, nil
}

// gate is the capability on one route.
type gate struct {
	mode                 string
	approve, allow, deny []string
}

// Detail is the detail of a "tool" interrupt.
type Detail struct {
	ToolName string `json:"toolName"`
	// ArgsPreview is the call's arguments, cut to PreviewMax characters,
	// for display only.
	ArgsPreview      string `json:"argsPreview"`
	SuggestedPattern string `json:"suggestedPattern"`
}

func (g *gate) beforeTool(_ thread.State, call thread.ToolCall, app thread.State) capabilities.Effect {
	switch {
	case slices.Contains(g.deny, call.Name):
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("tool %q is denied by the app's permissions (%s.deny.tool in dawn.yaml); do the task without it", call.Name, ConfigKey)}
	case !slices.Contains(g.approve, call.Name), g.mode == Bypass, slices.Contains(g.allow, call.Name), len(app[rememberKey(call.Name)]) > 0:
		return capabilities.Effect{}
	case g.mode == NonInteractive:
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("tool %q needs a person's approval, and this server runs with permissions mode non-interactive, so the call was denied; do the task without it", call.Name)}
	}
	detail, _ := json.Marshal(Detail{ToolName: call.Name, ArgsPreview: preview(string(call.Input)), SuggestedPattern: call.Name})
	return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "perm-" + uuid.NewString(), Kind: Kind, Detail: detail}}
}

// preview cuts s to PreviewMax characters, the last of them "…" when cut.
func preview(s string) string {
	if utf8.RuneCountInString(s) <= PreviewMax {
		return s
	}
	r := []rune(s)
	return string(r[:PreviewMax-1]) + "…"
}

// Decisions a resume payload may carry.
const (
	Once   = "once"
	Always = "always"
	Deny   = "deny"
	Edit   = "edit"
)

const decisions = `"once", "always", "deny" or {"decision":"edit","args":{…}}`

func (g *gate) resolve(_ thread.State, in capabilities.Interrupt, call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, bool, error) {
	if in.Kind != Kind {
		return capabilities.Resolution{}, false, nil
	}
	denied := capabilities.Resolution{Refusal: fmt.Sprintf("a person denied this call of tool %q; do not call it again for this request, go on without it or tell the user", call.Name)}
	if a.Status == capabilities.AnswerCancelled {
		return denied, true, nil
	}
	var word string
	if err := json.Unmarshal(a.Payload, &word); err == nil {
		switch word {
		case Once:
			return capabilities.Resolution{Run: true}, true, nil
		case Always:
			return capabilities.Resolution{Run: true, Remember: map[string]json.RawMessage{rememberKey(call.Name): json.RawMessage("true")}}, true, nil
		case Deny:
			return denied, true, nil
		}
		return capabilities.Resolution{}, true, fmt.Errorf("payload %q is not a decision; send %s", word, decisions)
	}
	var obj struct {
		Decision string          `json:"decision"`
		Args     json.RawMessage `json:"args"`
	}
	dec := json.NewDecoder(strings.NewReader(string(a.Payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return capabilities.Resolution{}, true, fmt.Errorf("payload is not a decision (%v); send %s", err, decisions)
	}
	switch obj.Decision {
	case Once, Always, Deny:
		if len(obj.Args) > 0 {
			return capabilities.Resolution{}, true, fmt.Errorf("payload: args go only with \"decision\":\"edit\"")
		}
		word, _ := json.Marshal(obj.Decision)
		return g.resolve(nil, in, call, capabilities.Answer{InterruptID: a.InterruptID, Status: a.Status, Payload: word})
	case Edit:
		if len(obj.Args) == 0 || string(obj.Args) == "null" {
			return capabilities.Resolution{}, true, fmt.Errorf("payload: an edit needs args, the call's new arguments as a JSON object")
		}
		return capabilities.Resolution{Run: true, Input: obj.Args}, true, nil
	}
	return capabilities.Resolution{}, true, fmt.Errorf("payload.decision %q is not a decision; send %s", obj.Decision, decisions)
}
