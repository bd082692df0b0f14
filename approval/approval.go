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

	"github.com/dawn-go/dawn/approval/bashrules"
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

// commandKeyPrefix begins the app values that hold the runBash command
// prefixes a person chose "always" for (the runtime keeps them per user).
const commandKeyPrefix = "approval.command."

// BashTool is the tool whose calls the bash rules judge, by its command
// input field.
const BashTool = "runBash"

// Marker returns the approval capability with the default settings:
// interactive, nothing allowed or denied in advance.
func Marker() capabilities.Marker { return marker{} }

type marker struct {
	app settings
	// envMode is ModeEnv's value, which overrides every mode.
	envMode     string
	constraints map[string][]Constraint
}

func (marker) Name() string { return Name }

// FrontMatterKeys claims the permissions key of agent.md, a route's own
// rules (capabilities.FrontMatterSection).
func (marker) FrontMatterKeys() []string { return []string{ConfigKey} }

// Detect finds the routes the capability gates: every route when dawn.yaml
// denies some tool or the app constrains some, and otherwise those whose
// agent.md lists tools to approve, sets permissions:, or has a workspace:
// (where runBash lives).
func (m marker) Detect(dir string) (string, bool) {
	if len(m.app.denyTools) > 0 || len(m.constraints) > 0 {
		return agentFile, true
	}
	data, err := os.ReadFile(filepath.Join(dir, agentFile))
	if err != nil {
		return "", false
	}
	// Other capabilities' keys were checked when the route was found.
	a, err := router.ParseAgentWith(filepath.Join(dir, agentFile), data, router.Claims{Any: true})
	if err != nil {
		return "", false
	}
	on := func(key string) bool {
		n := a.Sections[key]
		var b bool
		isBool := n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" && n.Decode(&b) == nil
		return n != nil && !yamldoc.IsNull(n) && (!isBool || b)
	}
	if len(a.Approve) == 0 && !on(ConfigKey) && !on("workspace") {
		return "", false
	}
	return agentFile, true
}

func (m marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	own, err := m.routeSettings(route)
	if err != nil {
		return nil, err
	}
	s := merge(m.app, own)
	mode := Interactive
	switch {
	case m.envMode != "":
		mode = m.envMode
	case s.mode != "":
		mode = s.mode
	}
	g := &gate{mode: mode, approve: route.Agent.Approve, allow: s.allowTools, deny: s.denyTools, bash: s.bash, constraints: m.constraints}
	details := map[string]any{"mode": g.mode}
	if len(g.approve) > 0 {
		details["approve"] = g.approve
	}
	if len(s.bash.Allow)+len(s.bash.Deny) > 0 {
		details["bash"] = map[string][]string{"allow": texts(s.bash.Allow), "deny": texts(s.bash.Deny)}
	}
	c := &capabilities.Contribution{
		Hooks:   &capabilities.Hooks{BeforeToolCtx: g.beforeTool, Resolve: g.resolve},
		Details: details,
		Check:   g.check(route),
	}
	c.Warnings = g.warnings(route, m.app.denyTools)
	if g.mode == Bypass {
		c.Notices = []string{"permissions mode is bypass: runBash commands no rule allows, and calls of tools under approve:, run without asking anyone (deny rules still hold); use it for development and tests only"}
	}
	return c, nil
}

// routeSettings reads the route's own permissions section of agent.md.
func (m marker) routeSettings(route *router.Route) (settings, error) {
	n := route.Agent.Sections[ConfigKey]
	if n == nil {
		return settings{}, nil
	}
	s, err := parseSettings(fmt.Sprintf("%s:%d: %s", route.Agent.File, n.Line+1, ConfigKey), n)
	return s, err
}

func texts(ps []bashrules.Pattern) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// check warns, once the route's tools are known, of an approve: entry
// naming no tool of the route.
func (g *gate) check(route *router.Route) func(p *capabilities.Prepared) []string {
	return func(p *capabilities.Prepared) []string {
		var warnings []string
		for _, name := range g.approve {
			if p.Tool(name) == nil && (route.Agent.Tools == nil || slices.Contains(route.Agent.Tools, name)) && !slices.Contains(route.Agent.Deny, name) {
				warnings = append(warnings, fmt.Sprintf("%s lists %q under approve:, but the route has no such tool; fix the name or register the tool", route.Agent.File, name))
			}
		}
		return warnings
	}
}

// interpreters run whatever their arguments say: allowing one by a prefix
// allows every command.
var interpreters = []string{"bash", "sh", "zsh", "dash", "eval", "exec", "env", "xargs", "sudo", "su", "doas", "nohup", "timeout", "nice", "command", "builtin", "source", ".", "python", "python3", "node", "perl", "ruby", "php", "awk", "find"}

// warnings are the route's approve: entries that cannot act, and allow
// rules that allow more than they seem to.
func (g *gate) warnings(route *router.Route, appDeny []string) []string {
	var out []string
	for _, name := range g.approve {
		switch {
		case slices.Contains(g.deny, name):
			where := "its own"
			if slices.Contains(appDeny, name) {
				where = "dawn.yaml's"
			}
			out = append(out, fmt.Sprintf("%s lists %q under approve:, but %s %s.deny.tool denies it, and deny wins: remove one of the two", route.Agent.File, name, where, ConfigKey))
		case name == BashTool:
			out = append(out, fmt.Sprintf("%s lists %q under approve:, which asks about every command; its own rules (%s.allow.bash, deny.bash) ask only about commands they do not cover: remove it from approve:", route.Agent.File, name, ConfigKey))
		}
		if route.Agent.Tools != nil && !slices.Contains(route.Agent.Tools, name) {
			out = append(out, fmt.Sprintf("%s lists %q under approve:, but its tools: list does not have it, so the route never calls it: fix the name or add it to tools:", route.Agent.File, name))
		}
	}
	for _, p := range g.bash.Allow {
		if slices.Contains(interpreters, p.Words()[0]) && len(p.Words()) == 1 {
			out = append(out, fmt.Sprintf("%s.allow.bash has %q, which runs any command given to it, so it allows every command; allow the commands themselves", ConfigKey, p.String()))
		}
	}
	return out
}

// ConfigKeys names the capability's dawn.yaml section.
func (marker) ConfigKeys() []string { return []string{ConfigKey} }

// Configure reads dawn.yaml's permissions section, then ModeEnv from the
// process environment, which overrides the mode.
func (m marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	return m.configure(values[ConfigKey], os.Getenv(ModeEnv))
}

func (m marker) configure(section *yaml.Node, envMode string) (capabilities.Marker, error) {
	s, err := parseSettings(ConfigKey, section)
	if err != nil {
		return nil, err
	}
	m.app = s
	if envMode != "" && !validMode(envMode) {
		return nil, &capabilities.EnvError{Var: ModeEnv, Value: envMode, Want: "use interactive, non-interactive or bypass"}
	}
	m.envMode = envMode
	return m, nil
}

// gate is the capability on one route.
type gate struct {
	mode                 string
	approve, allow, deny []string
	bash                 bashrules.Rules
	constraints          map[string][]Constraint
}

// Detail is the detail of a "tool" interrupt.
type Detail struct {
	ToolName string `json:"toolName"`
	// ArgsPreview is the call's arguments, cut to PreviewMax characters,
	// for display only.
	ArgsPreview      string `json:"argsPreview"`
	SuggestedPattern string `json:"suggestedPattern"`
	// Reason is what the app's constraint said when it escalated the call;
	// empty for a tool under approve:.
	Reason string `json:"reason,omitempty"`
}

// beforeTool judges one call: tools denied, then the app's constraints on
// the tool, then runBash's command by the bash rules, then approve:.
func (g *gate) beforeTool(ctx context.Context, _ thread.State, call thread.ToolCall, app thread.State) capabilities.Effect {
	if slices.Contains(g.deny, call.Name) {
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("tool %q is denied by the app's permissions (%s.deny.tool); do the task without it", call.Name, ConfigKey)}
	}
	if cs := g.constraints[call.Name]; len(cs) > 0 {
		d := judgeCall(ctx, call.Name, cs, call.Input)
		switch {
		case d.Outcome == Refuse:
			return capabilities.Effect{Refuse: true, Refusal: d.Reason}
		case d.Outcome == Ask:
			return g.ask(call, app, d.Reason)
		case call.Name != BashTool:
			return capabilities.Effect{}
		}
	}
	if call.Name == BashTool {
		return g.command(call, app)
	}
	if !slices.Contains(g.approve, call.Name) {
		return capabilities.Effect{}
	}
	return g.ask(call, app, "")
}

// ask parks call on a "tool" interrupt, unless the mode, the allow list or
// a person's earlier "always" says otherwise.
func (g *gate) ask(call thread.ToolCall, app thread.State, reason string) capabilities.Effect {
	switch {
	case g.mode == Bypass, slices.Contains(g.allow, call.Name), len(app[rememberKey(call.Name)]) > 0:
		return capabilities.Effect{}
	case g.mode == NonInteractive:
		why := ""
		if reason != "" {
			why = " (" + reason + ")"
		}
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("tool %q needs a person's approval%s, and this server runs with permissions mode non-interactive, so the call was denied; do the task without it", call.Name, why)}
	}
	detail, _ := json.Marshal(Detail{ToolName: call.Name, ArgsPreview: preview(string(call.Input)), SuggestedPattern: call.Name, Reason: reason})
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

func (g *gate) resolve(s thread.State, in capabilities.Interrupt, call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, bool, error) {
	switch in.Kind {
	case Kind:
		r, err := g.resolveTool(call, a)
		return r, true, err
	case CommandKind:
		r, err := g.resolveCommand(in, call, a)
		return r, true, err
	}
	return capabilities.Resolution{}, false, nil
}

func (g *gate) resolveTool(call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, error) {
	denied := capabilities.Resolution{Refusal: fmt.Sprintf("a person denied this call of tool %q; do not call it again for this request, go on without it or tell the user", call.Name)}
	if a.Status == capabilities.AnswerCancelled {
		return denied, nil
	}
	word, args, err := decision(a.Payload, "args", decisions)
	if err != nil {
		return capabilities.Resolution{}, err
	}
	switch word {
	case Once:
		return capabilities.Resolution{Run: true}, nil
	case Always:
		return capabilities.Resolution{Run: true, Remember: map[string]json.RawMessage{rememberKey(call.Name): json.RawMessage("true")}}, nil
	case Deny:
		return denied, nil
	case Edit:
		if len(args) == 0 || string(args) == "null" {
			return capabilities.Resolution{}, fmt.Errorf("payload: an edit needs args, the call's new arguments as a JSON object")
		}
		return capabilities.Resolution{Run: true, Input: args}, nil
	}
	return capabilities.Resolution{}, fmt.Errorf("payload %q is not a decision; send %s", word, decisions)
}

// decision reads a payload: a word ("once"), or an object with "decision"
// and, only for an edit, the field named edit.
func decision(payload json.RawMessage, edit, want string) (string, json.RawMessage, error) {
	var word string
	if err := json.Unmarshal(payload, &word); err == nil {
		if word == Edit {
			return "", nil, fmt.Errorf("payload: an edit is an object, %s", want)
		}
		return word, nil, nil
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(string(payload)))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "", nil, fmt.Errorf("payload is not a decision; send %s", want)
	}
	if err := json.Unmarshal(obj["decision"], &word); err != nil {
		return "", nil, fmt.Errorf("payload.decision must be a word; send %s", want)
	}
	for k := range obj {
		if k != "decision" && k != edit {
			return "", nil, fmt.Errorf("payload: unknown field %q; send %s", k, want)
		}
	}
	if word != Edit && obj[edit] != nil {
		return "", nil, fmt.Errorf("payload: %s goes only with \"decision\":\"edit\"", edit)
	}
	if word != Once && word != Always && word != Deny && word != Edit {
		return "", nil, fmt.Errorf("payload.decision %q is not a decision; send %s", word, want)
	}
	return word, obj[edit], nil
}
