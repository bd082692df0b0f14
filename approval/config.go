package approval

import (
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/approval/bashrules"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// settings are one permissions section: dawn.yaml's for the app, or a
// route's in its agent.md.
type settings struct {
	// mode is "" when the section does not set one.
	mode                  string
	allowTools, denyTools []string
	bash                  bashrules.Rules
}

// example is the section's shape, for messages.
const example = "permissions: {mode: interactive, allow: {bash: [ls, git status], tool: [search]}, deny: {bash: [rm -rf], tool: [dropTable]}}"

// parseSettings reads a permissions section; where names it in errors
// ("permissions" in dawn.yaml, "agent.md:3: permissions" in a route).
func parseSettings(where string, section *yaml.Node) (settings, error) {
	var s settings
	if section == nil || yamldoc.IsNull(section) {
		return s, nil
	}
	if section.Kind != yaml.MappingNode {
		return s, fmt.Errorf("%s must be a mapping, like %s", where, example)
	}
	for key, val := range yamldoc.Pairs(section) {
		switch key.Value {
		case "mode":
			if val.Kind != yaml.ScalarNode || !validMode(val.Value) {
				return s, fmt.Errorf("%s.mode is %q; use interactive, non-interactive or bypass", where, val.Value)
			}
			s.mode = val.Value
		case "allow", "deny":
			tools, bash, err := ruleLists(where+"."+key.Value, val)
			if err != nil {
				return s, err
			}
			if key.Value == "allow" {
				s.allowTools, s.bash.Allow = tools, bash
			} else {
				s.denyTools, s.bash.Deny = tools, bash
			}
		default:
			return s, fmt.Errorf("%s: unknown key %q; allowed keys are mode, allow, deny, like %s", where, key.Value, example)
		}
	}
	return s, nil
}

func validMode(s string) bool { return s == Interactive || s == NonInteractive || s == Bypass }

// ruleLists reads permissions.allow or permissions.deny: {tool: [names],
// bash: [command prefixes]}.
func ruleLists(where string, val *yaml.Node) (tools []string, bash []bashrules.Pattern, err error) {
	want := fmt.Errorf("%s must be {tool: [names], bash: [command prefixes]}, like {tool: [deployProd], bash: [git status]}", where)
	if yamldoc.IsNull(val) {
		return nil, nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, nil, want
	}
	for k, v := range yamldoc.Pairs(val) {
		var items []string
		if k.Value != "tool" && k.Value != "bash" {
			return nil, nil, fmt.Errorf("%s: unknown key %q; use tool (tool names) or bash (runBash command prefixes)", where, k.Value)
		}
		if yamldoc.IsNull(v) {
			continue
		}
		if v.Kind != yaml.SequenceNode || v.Decode(&items) != nil {
			return nil, nil, want
		}
		for i, item := range items {
			if strings.TrimSpace(item) == "" {
				return nil, nil, fmt.Errorf("%s.%s[%d] is empty", where, k.Value, i)
			}
		}
		if k.Value == "tool" {
			tools = items
			continue
		}
		for i, item := range items {
			p, err := bashrules.ParsePattern(item)
			if err != nil {
				return nil, nil, fmt.Errorf("%s.bash[%d]: %v", where, i, err)
			}
			bash = append(bash, p)
		}
	}
	return tools, bash, nil
}

// merge returns the app's settings with a route's over them: the route's
// mode wins when it sets one, and the lists are joined (deny still wins
// over allow, so a route cannot allow what the app denies).
func merge(app, route settings) settings {
	out := app
	if route.mode != "" {
		out.mode = route.mode
	}
	out.allowTools = append(append([]string(nil), app.allowTools...), route.allowTools...)
	out.denyTools = append(append([]string(nil), app.denyTools...), route.denyTools...)
	out.bash.Allow = append(append([]bashrules.Pattern(nil), app.bash.Allow...), route.bash.Allow...)
	out.bash.Deny = append(append([]bashrules.Pattern(nil), app.bash.Deny...), route.bash.Deny...)
	return out
}
