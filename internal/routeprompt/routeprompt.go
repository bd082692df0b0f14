package routeprompt

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// Data is what a prompt template sees: the route's params by name, the
// thread's state fields, decoded from JSON, and the user whose request
// started the run ("" when the server has no authentication or the service
// credential sent it).
type Data struct {
	Params map[string]string
	State  map[string]any
	User   string
}

// Template is a parsed agent.md body. The zero of *Template (nil) is a
// body without template syntax, rendered verbatim.
type Template struct {
	file   string
	pad    int // newlines put before the body so lines match the file
	tmpl   *template.Template
	prompt string
}

// HasSyntax reports whether prompt uses template syntax at all.
func HasSyntax(prompt string) bool { return strings.Contains(prompt, "{{") }

// Parse parses the prompt of route's agent.md. It returns nil and no error
// for a body without template syntax. Errors name the file and the line.
func Parse(a router.Agent) (*Template, error) {
	if !HasSyntax(a.Prompt) {
		return nil, nil
	}
	line := promptLine(a)
	name := a.File
	if name == "" {
		name = "agent.md"
	}
	// Pad the body so text/template's line numbers are the file's.
	padded := strings.Repeat("\n", line-1) + a.Prompt
	t, err := template.New(name).Option("missingkey=error").Parse(padded)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	return &Template{file: name, pad: line - 1, tmpl: t, prompt: a.Prompt}, nil
}

// promptLine is the line of a.File on which the prompt starts, or 1 when
// the file cannot be read.
func promptLine(a router.Agent) int {
	data, err := os.ReadFile(a.File)
	if err != nil {
		return 1
	}
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), "\uFEFF"), "\r\n", "\n")
	at := strings.LastIndex(text, a.Prompt)
	if at < 0 {
		return 1
	}
	return 1 + strings.Count(text[:at], "\n")
}

// Render executes the template with params, state and user. A missing
// param or state field is an error naming the file and line.
func (t *Template) Render(params map[string]string, state thread.State, user string) (string, error) {
	if params == nil {
		params = map[string]string{}
	}
	d := Data{Params: params, State: make(map[string]any, len(state)), User: user}
	for k, raw := range state {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", fmt.Errorf("%s: state field %q is not JSON: %v", t.file, k, err)
		}
		d.State[k] = v
	}
	var b strings.Builder
	if err := t.tmpl.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt template: %w", err)
	}
	// A leading "{{-" may already have trimmed the padding.
	return strings.TrimPrefix(b.String(), strings.Repeat("\n", t.pad)), nil
}

var cache sync.Map // file + "\x00" + prompt → *Template

// Prompt renders route's prompt for one model call: verbatim without
// template syntax, else executed with params, state and the run's user
// ({{ .User }}). Parsed templates are kept for the life of the process,
// keyed by file and text.
func Prompt(r *router.Route, params map[string]string, state thread.State, user string) (string, error) {
	if !HasSyntax(r.Agent.Prompt) {
		return r.Agent.Prompt, nil
	}
	key := r.Agent.File + "\x00" + r.Agent.Prompt
	t, ok := cache.Load(key)
	if !ok {
		parsed, err := Parse(r.Agent)
		if err != nil {
			return "", err
		}
		t, _ = cache.LoadOrStore(key, parsed)
	}
	return t.(*Template).Render(params, state, user)
}

// Check parses route's prompt and reports every name it uses that the
// route does not have: a .Params key that is not one of the route's params,
// a .State key that is not one of fields, or any other top-level name.
// Each error names the file and line.
func Check(r *router.Route, fields []string) []error {
	t, err := Parse(r.Agent)
	if err != nil {
		return []error{err}
	}
	if t == nil {
		return nil
	}
	var errs []error
	for _, tree := range t.tmpl.Templates() {
		if tree.Tree == nil || tree.Root == nil {
			continue
		}
		walk(tree.Root, func(n parse.Node, ident []string) {
			if msg := unknown(ident, r, fields); msg != "" {
				// file:line:col, whose col text/template counts at
				// the chain's last field: keep file:line.
				at, _ := tree.ErrorContext(n)
				if i := strings.LastIndexByte(at, ':'); i > 0 {
					at = at[:i]
				}
				errs = append(errs, fmt.Errorf("%s: prompt template: %s", at, msg))
			}
		})
	}
	return errs
}

// unknown says what is wrong with a field chain read from the data root
// (["Params", "tenant"]), or "".
func unknown(ident []string, r *router.Route, fields []string) string {
	switch ident[0] {
	case "Params":
		if len(ident) > 1 && !slices.Contains(r.Params, ident[1]) {
			return fmt.Sprintf("route %s has no param %q; its params are %s", r.ID, ident[1], list(r.Params))
		}
	case "State":
		if len(ident) > 1 && !slices.Contains(fields, ident[1]) {
			return fmt.Sprintf("route %s has no state field %q; its fields are %s (add it to state.yaml)", r.ID, ident[1], list(fields))
		}
	case "User":
		if len(ident) > 1 {
			return fmt.Sprintf(".User is the user's name (text) and has no field %q", ident[1])
		}
	default:
		return fmt.Sprintf("unknown name .%s; a prompt can use .Params.<name>, .State.<field> and .User", ident[0])
	}
	return ""
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// walk calls visit for every field chain read from the data root (dot at
// the top level). Inside range and with, dot changes, so their bodies are
// not checked; their pipelines are.
func walk(n parse.Node, visit func(parse.Node, []string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, visit)
		}
	case *parse.ActionNode:
		walk(n.Pipe, visit)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, visit)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, visit)
		}
	case *parse.FieldNode:
		visit(n, n.Ident)
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			visit(n, n.Ident[1:])
		}
	case *parse.ChainNode:
		walk(n.Node, visit)
	case *parse.IfNode:
		walk(n.Pipe, visit)
		walk(n.List, visit)
		walk(n.ElseList, visit)
	case *parse.RangeNode:
		walk(n.Pipe, visit)
		walk(n.ElseList, visit)
	case *parse.WithNode:
		walk(n.Pipe, visit)
		walk(n.ElseList, visit)
	case *parse.TemplateNode:
		walk(n.Pipe, visit)
	}
}
