package workspace

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// Kind is the kind of the interrupts the capability raises.
const Kind = "path"

// Decisions a resume payload may carry, as a JSON string or as
// {"decision": …}.
const (
	Once   = "once"
	Always = "always"
	Deny   = "deny"
)

// previewMax bounds detail.argsPreview, in characters.
const previewMax = 500

// Detail is the detail of a "path" interrupt.
type Detail struct {
	ToolName string `json:"toolName"`
	// Path is the workspace path the call writes.
	Path string `json:"path"`
	// Pattern is the approve glob the path matched.
	Pattern string `json:"pattern"`
	// ArgsPreview is the call's arguments, cut to 500 characters.
	ArgsPreview string `json:"argsPreview"`
	// SuggestedPattern is what "always" allows from then on: this path.
	SuggestedPattern string `json:"suggestedPattern"`
}

// rememberKey is the app value that says a person chose "always" for
// writes to name on route.
func rememberKey(route, name string) string { return "workspace.always." + route + ":" + name }

// writes reports whether tool writes files.
func writes(tool string) bool { return tool == WriteFile || tool == EditFile }

// beforeTool holds back a write to a path an approve glob matches, unless
// a person chose "always" for that path.
func (sp *space) beforeTool(_ thread.State, call thread.ToolCall, app thread.State) capabilities.Effect {
	if !writes(call.Name) {
		return capabilities.Effect{}
	}
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Input, &in) != nil {
		return capabilities.Effect{}
	}
	name, err := CleanFile(in.Path)
	if err != nil {
		return capabilities.Effect{} // the tool refuses the path itself
	}
	pattern := sp.approval(name)
	if pattern == "" || len(app[rememberKey(sp.route, name)]) > 0 {
		return capabilities.Effect{}
	}
	detail, _ := json.Marshal(Detail{ToolName: call.Name, Path: name, Pattern: pattern, ArgsPreview: preview(string(call.Input)), SuggestedPattern: name})
	return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "path-" + uuid.NewString(), Kind: Kind, Detail: detail}}
}

// approval returns the first approve glob that matches name, or "".
func (sp *space) approval(name string) string {
	for _, p := range sp.approve {
		if Match(p, name) {
			return p
		}
	}
	return ""
}

func preview(s string) string {
	if utf8.RuneCountInString(s) <= previewMax {
		return s
	}
	return string([]rune(s)[:previewMax-1]) + "…"
}

const decisions = `"once", "always" or "deny" (or {"decision": "once"})`

// resolve answers a "path" interrupt: once runs the write, always runs it
// and allows later writes to the same path on the route, deny (or a
// cancel) refuses it.
func (sp *space) resolve(_ thread.State, in capabilities.Interrupt, call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, bool, error) {
	if in.Kind != Kind {
		return capabilities.Resolution{}, false, nil
	}
	var d Detail
	_ = json.Unmarshal(in.Detail, &d)
	denied := capabilities.Resolution{Refusal: fmt.Sprintf("a person denied writing %s; do not write it again for this request, go on without it or tell the user", d.Path)}
	if a.Status == capabilities.AnswerCancelled {
		return denied, true, nil
	}
	word, err := capabilities.DecisionWord(a.Payload, decisions)
	if err != nil {
		return capabilities.Resolution{}, true, err
	}
	switch word {
	case Once:
		return capabilities.Resolution{Run: true}, true, nil
	case Always:
		return capabilities.Resolution{Run: true, Remember: map[string]json.RawMessage{rememberKey(sp.route, d.Path): json.RawMessage("true")}}, true, nil
	case Deny:
		return denied, true, nil
	}
	return capabilities.Resolution{}, true, fmt.Errorf("payload %q is not a decision on a path interrupt; send %s", word, decisions)
}
