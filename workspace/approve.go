package workspace

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
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
	// Resolved is the path the write lands on when a symbolic link in the
	// folder leads elsewhere; empty when it lands on Path.
	Resolved string `json:"resolved,omitempty"`
	// Pattern is the approve glob Path or Resolved matched.
	Pattern string `json:"pattern"`
	// ArgsPreview is the call's arguments, cut to 500 characters.
	ArgsPreview string `json:"argsPreview"`
	// SuggestedPattern is what "always" allows from then on: the path the
	// write lands on.
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
	// A link inside the folder may lead the write to another file: the
	// globs judge both the path written and the path it lands on.
	lands := sp.landsOn(name)
	pattern := sp.approval(name)
	if pattern == "" {
		pattern = sp.approval(lands)
	}
	if pattern == "" || len(app[rememberKey(sp.route, lands)]) > 0 {
		return capabilities.Effect{}
	}
	d := Detail{ToolName: call.Name, Path: name, Pattern: pattern, ArgsPreview: preview(string(call.Input)), SuggestedPattern: lands}
	if lands != name {
		d.Resolved = lands
	}
	detail, _ := json.Marshal(d)
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

// maxLinkHops bounds the symbolic links landsOn follows, as the kernel's
// own bound (40 on Linux) does.
const maxLinkHops = 40

// landsOn returns the workspace path a write to name lands on in the
// route's folder: name with every symbolic link on the way followed, as
// os.Root follows it. The part that does not exist yet is created as
// written. A link that leads out of the folder, or too many links, leave
// name as it is: os.Root refuses that write. The thread's tree has no
// links.
func (sp *space) landsOn(name string) string {
	if sp.dir == "" {
		return name
	}
	root, err := os.OpenRoot(sp.dir)
	if err != nil {
		return name
	}
	defer root.Close()
	if lands, ok := followLinks(root, name); ok {
		return lands
	}
	return name
}

// followLinks walks name's segments in root, replacing each symbolic
// link by its target; ok is false when a link leads out of root.
func followLinks(root *os.Root, name string) (lands string, ok bool) {
	todo := strings.Split(name, "/")
	var done []string
	for hops := 0; len(todo) > 0; {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", false
			}
			done = done[:len(done)-1]
			continue
		}
		at := path.Join(path.Join(done...), seg)
		info, err := root.Lstat(at)
		if err != nil {
			// Not there yet: the write creates the rest as written.
			return path.Join(append([]string{at}, todo...)...), true
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, seg)
			continue
		}
		target, err := root.Readlink(at)
		if hops++; err != nil || hops > maxLinkHops || filepath.IsAbs(target) {
			return "", false
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	if len(done) == 0 {
		return "", false // the root itself: no file to write
	}
	return path.Join(done...), true
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
		lands := d.Path
		if d.Resolved != "" {
			lands = d.Resolved
		}
		return capabilities.Resolution{Run: true, Remember: map[string]json.RawMessage{rememberKey(sp.route, lands): json.RawMessage("true")}}, true, nil
	case Deny:
		return denied, true, nil
	}
	return capabilities.Resolution{}, true, fmt.Errorf("payload %q is not a decision on a path interrupt; send %s", word, decisions)
}
