package approval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/approval/bashrules"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// CommandKind is the kind of the interrupts a runBash command no rule
// covers raises.
const CommandKind = "command"

// CommandDetail is the detail of a "command" interrupt.
type CommandDetail struct {
	ToolName string `json:"toolName"`
	// Command is the command as the model wrote it: what runs.
	Command string `json:"command"`
	// ArgsPreview is the call's arguments, cut to PreviewMax characters.
	ArgsPreview string `json:"argsPreview"`
	// SuggestedPattern is the prefix "always" allows from then on (the
	// first of SuggestedPatterns), "" when no prefix can be remembered.
	SuggestedPattern string `json:"suggestedPattern"`
	// SuggestedPatterns are every prefix "always" allows: one for each
	// command of a chain that no rule covers.
	SuggestedPatterns []string `json:"suggestedPatterns,omitempty"`
	// Unknown lists the commands of the chain no rule covers, and why.
	Unknown []string `json:"unknown"`
}

const commandDecisions = `"once", "always", "deny" or {"decision":"edit","command":"…"}`

// commandOf reads runBash's command from a call's input. A call whose
// input has no command, or a second field that differs from "command"
// only by case (which a lenient decoder would take for it), is not judged
// here: ok is false, and ambiguous says to refuse it.
func commandOf(input json.RawMessage) (command string, ok, ambiguous bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return "", false, false
	}
	for k := range fields {
		if k != "command" && strings.EqualFold(k, "command") {
			return "", false, true
		}
	}
	if json.Unmarshal(fields["command"], &command) != nil {
		return "", false, false
	}
	return command, true, false
}

// remembered returns the command prefixes a person chose "always" for, as
// the runtime hands them to the run (the user's own and the app's).
func remembered(app thread.State) []bashrules.Pattern {
	var out []bashrules.Pattern
	for k := range app {
		text, ok := strings.CutPrefix(k, commandKeyPrefix)
		if !ok {
			continue
		}
		if p, err := bashrules.ParsePattern(text); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// command judges a runBash call by the bash rules: deny first, then
// allow and the prefixes people chose "always" for; what neither covers
// is unknown, and the mode decides it.
func (g *gate) command(call thread.ToolCall, app thread.State) capabilities.Effect {
	command, ok, ambiguous := commandOf(call.Input)
	if ambiguous {
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("the %s input has more than one field named like \"command\"; send exactly one \"command\"", BashTool)}
	}
	if !ok {
		return capabilities.Effect{} // the tool refuses input off its schema
	}
	j := g.bash.Judge(command, remembered(app))
	switch {
	case j.Verdict == bashrules.Denied:
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("the command %q is denied by the app's permissions (the rule %q in %s.deny.bash); do not run it, do the task another way or tell the user", j.Command, j.Rule, ConfigKey)}
	case j.Verdict == bashrules.Allowed, g.mode == Bypass:
		return capabilities.Effect{}
	case g.mode == NonInteractive:
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("the command %q was not run: no rule allows %s, and this server runs with permissions mode non-interactive, so no one can approve it. %s", j.Command, strings.Join(j.Unknown, "; "), g.allowedHint())}
	}
	d := CommandDetail{ToolName: BashTool, Command: command, ArgsPreview: preview(string(call.Input)), SuggestedPatterns: j.Patterns, Unknown: j.Unknown}
	if len(j.Patterns) > 0 {
		d.SuggestedPattern = j.Patterns[0]
	}
	detail, _ := json.Marshal(d)
	return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "perm-" + uuid.NewString(), Kind: CommandKind, Detail: detail}}
}

// allowedHint names the prefixes the rules allow, for the model, so that
// it can pick a command that runs.
func (g *gate) allowedHint() string {
	if len(g.bash.Allow) == 0 {
		return "No command is allowed without a person; do the task without running commands."
	}
	const most = 20
	names := texts(g.bash.Allow)
	if len(names) > most {
		names = append(names[:most], "…")
	}
	return "Commands starting with these words run: " + strings.Join(names, ", ") + "."
}

// resolveCommand answers a "command" interrupt: once runs the command,
// always runs it and allows its suggested prefixes for the answering
// user from then on, deny (or a cancel) refuses it, and an edit runs the
// person's command instead, once the deny rules allow it.
func (g *gate) resolveCommand(in capabilities.Interrupt, call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, error) {
	var d CommandDetail
	_ = json.Unmarshal(in.Detail, &d)
	denied := capabilities.Resolution{Refusal: fmt.Sprintf("a person denied running the command %q; do not run it again for this request, go on without it or tell the user", d.Command)}
	if a.Status == capabilities.AnswerCancelled {
		return denied, nil
	}
	word, edited, err := decision(a.Payload, "command", commandDecisions)
	if err != nil {
		return capabilities.Resolution{}, err
	}
	switch word {
	case Once:
		return capabilities.Resolution{Run: true}, nil
	case Always:
		if len(d.SuggestedPatterns) == 0 {
			return capabilities.Resolution{}, fmt.Errorf("payload: \"always\" has no prefix to remember for %q (its commands start with expansions, or it does not parse); answer \"once\" or \"deny\"", d.Command)
		}
		remember := map[string]json.RawMessage{}
		for _, p := range d.SuggestedPatterns {
			remember[commandKeyPrefix+p] = json.RawMessage("true")
		}
		return capabilities.Resolution{Run: true, Remember: remember}, nil
	case Deny:
		return denied, nil
	case Edit:
		return g.editCommand(call, edited)
	}
	return capabilities.Resolution{}, fmt.Errorf("payload %q is not a decision on a command; send %s", word, commandDecisions)
}

// editCommand runs the person's command in place of the model's, with
// the call's other arguments kept, unless a deny rule matches it: a
// person approves what no allow rule covers, not what the app denies.
func (g *gate) editCommand(call thread.ToolCall, edited json.RawMessage) (capabilities.Resolution, error) {
	var command string
	if err := json.Unmarshal(edited, &command); err != nil || strings.TrimSpace(command) == "" {
		return capabilities.Resolution{}, fmt.Errorf("payload.command must be the command to run instead, as a non-empty string")
	}
	if j := g.bash.Judge(command, nil); j.Verdict == bashrules.Denied {
		return capabilities.Resolution{}, fmt.Errorf("payload.command %q is denied by the app's permissions (the rule %q in %s.deny.bash); send another command or deny the call", j.Command, j.Rule, ConfigKey)
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Input, &args) != nil || args == nil {
		args = map[string]json.RawMessage{}
	}
	args["command"], _ = json.Marshal(command)
	input, err := json.Marshal(args)
	if err != nil {
		return capabilities.Resolution{}, err
	}
	return capabilities.Resolution{Run: true, Input: input}, nil
}
