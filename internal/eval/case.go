package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/thread"
	"gopkg.in/yaml.v3"
)

// Folder is the folder beside a route's agent.md that holds its eval files.
const Folder = "evals"

// DefaultThreshold is the judge score a criterion needs when the case sets
// no threshold.
const DefaultThreshold = 0.7

// Case is one eval case: an input for a route and what its run must show.
type Case struct {
	// Name is unique within its file.
	Name string `json:"name"`
	// File is the eval file, as the app folder path joined with its path
	// inside the app.
	File string `json:"file"`
	// Line is the case's line in File.
	Line int `json:"line"`
	// Route is the id of the route whose evals/ folder holds File.
	Route  string `json:"route"`
	Input  Input  `json:"input"`
	Setup  Setup  `json:"setup"`
	Expect Expect `json:"expect"`
	// Model, when set, runs the case on this model instead of the
	// route's: the case's model:, else its file's. A script:FILE model's
	// relative FILE is made absolute from the eval file's folder.
	Model string `json:"model,omitempty"`
	// Answers answer the interrupts the run parks on, by kind and name.
	Answers []Answer `json:"answers,omitempty"`
}

// ID names the case in reports: its route and name.
func (c Case) ID() string { return c.Route + " " + c.Name }

// Input is what the case sends: messages, the route's params and state
// fields its state.yaml declares.
type Input struct {
	Messages []thread.Message           `json:"messages"`
	Params   map[string]string          `json:"params,omitempty"`
	State    map[string]json.RawMessage `json:"state,omitempty"`
}

// Setup is the thread the case continues: earlier user turns, each run on
// the thread before the input.
type Setup struct {
	Messages []thread.Message `json:"messages,omitempty"`
}

// Expect is what the run must show. Unset fields check nothing.
type Expect struct {
	PlanCompleted  *bool         `json:"plan_completed,omitempty"`
	Todos          []Todo        `json:"todos,omitempty"`
	ToolsCalled    []ToolMatcher `json:"tools_called,omitempty"`
	ToolsInOrder   bool          `json:"tools_in_order,omitempty"`
	ToolsNotCalled []string      `json:"tools_not_called,omitempty"`
	AnswerContains []string      `json:"answer_contains,omitempty"`
	AnswerMatches  string        `json:"answer_matches,omitempty"`
	MaxTurns       int           `json:"max_turns,omitempty"`
	MaxInputTokens int64         `json:"max_input_tokens,omitempty"`
	Judge          *Judge        `json:"judge,omitempty"`
	DriftExpect
	// Interrupt expects the run to park on an interrupt of this kind
	// (and name); answered by an answer or left pending.
	Interrupt *InterruptMatcher `json:"interrupt,omitempty"`

	answerRE *regexp.Regexp
}

// Todo is a plan item: its content and status.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// ToolMatcher matches one tool call: its name, and optionally arguments
// equal to Args (each key's JSON value) or matching ArgsMatch (each key's
// value, as text, against a regular expression).
type ToolMatcher struct {
	Name      string                     `json:"name"`
	Args      map[string]json.RawMessage `json:"args,omitempty"`
	ArgsMatch map[string]string          `json:"args_match,omitempty"`

	argsRE map[string]*regexp.Regexp
}

// Judge is criteria a judge model scores from 0 to 1; each must reach
// Threshold.
type Judge struct {
	Criteria  []string `json:"criteria"`
	Threshold float64  `json:"threshold"`
}

// Expectation names, in the order reports list them.
const (
	ExpectRun            = "run" // the run ended without an error
	ExpectPlanCompleted  = "plan_completed"
	ExpectTodos          = "todos"
	ExpectToolsCalled    = "tools_called"
	ExpectToolsNotCalled = "tools_not_called"
	ExpectAnswerContains = "answer_contains"
	ExpectAnswerMatches  = "answer_matches"
	ExpectMaxTurns       = "max_turns"
	ExpectMaxInputTokens = "max_input_tokens"
	ExpectJudge          = "judge"
	ExpectInterrupt      = "interrupt"
)

// Names lists the expectations the case checks, "run" first.
func (e Expect) Names() []string {
	names := []string{ExpectRun}
	add := func(set bool, name string) {
		if set {
			names = append(names, name)
		}
	}
	add(e.PlanCompleted != nil, ExpectPlanCompleted)
	add(e.Todos != nil, ExpectTodos)
	add(len(e.ToolsCalled) > 0, ExpectToolsCalled)
	add(len(e.ToolsNotCalled) > 0, ExpectToolsNotCalled)
	add(len(e.AnswerContains) > 0, ExpectAnswerContains)
	add(e.AnswerMatches != "", ExpectAnswerMatches)
	add(e.MaxTurns > 0, ExpectMaxTurns)
	add(e.MaxInputTokens > 0, ExpectMaxInputTokens)
	names = append(names, e.DriftExpect.names()...)
	add(e.Interrupt != nil, ExpectInterrupt)
	add(e.Judge != nil, ExpectJudge)
	return names
}

// Error is a problem in an eval file: the file, the case, the field and
// what is wrong.
type Error struct {
	File  string
	Line  int
	Case  string // empty for a problem outside any case
	Field string // such as "expect.todos[1].status"; empty for the file
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Case != "" {
		fmt.Fprintf(&b, ": case %q", e.Case)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	return b.String() + ": " + e.Msg
}

// Parse reads the eval file data (named file in errors) of the route with
// id route. Every problem is reported, joined, as *Error values; the cases
// that are fine are returned beside them.
//
// The file is a mapping with one key, cases, a list of cases:
//
//	cases:
//	  - name: answers
//	    input: {message: "Help me", params: {tenant: acme}}
//	    expect: {plan_completed: true, answer_contains: [help]}
func Parse(file, route string, data []byte) ([]Case, error) {
	p := &parser{file: file}
	root, err := yamldoc.Mapping(data)
	var syntax *yamldoc.SyntaxError
	var notMapping *yamldoc.NotMappingError
	switch {
	case errors.As(err, &syntax):
		return nil, &Error{File: file, Line: syntax.Line, Msg: "not valid YAML: " + syntax.Msg}
	case errors.As(err, &notMapping):
		return nil, &Error{File: file, Line: notMapping.Line, Msg: "expected a mapping with the key cases: a list of cases"}
	case err != nil:
		return nil, &Error{File: file, Msg: err.Error()}
	case root == nil:
		return nil, &Error{File: file, Msg: "the file is empty: add cases: with a list of cases, or remove the file"}
	}
	var list *yaml.Node
	for key, val := range yamldoc.Pairs(root) {
		switch key.Value {
		case "cases":
			list = val
		case "model":
			p.fileModel, _ = p.model(val, "model")
		default:
			p.fail(key, "", key.Value, "field not found; an eval file has the keys cases and model")
		}
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		line := root.Line
		if list != nil {
			line = list.Line
		}
		p.errs = append(p.errs, &Error{File: file, Line: line, Field: "cases", Msg: "must be a list of one or more cases"})
		return nil, errors.Join(p.errs...)
	}
	var cases []Case
	names := map[string]int{}
	for i, n := range list.Content {
		c, ok := p.parseCase(yamldoc.Resolve(n), i)
		if !ok {
			continue
		}
		if prev, dup := names[c.Name]; dup {
			p.errs = append(p.errs, &Error{File: file, Line: c.Line, Case: c.Name, Field: "name", Msg: fmt.Sprintf("the name is used by the case on line %d too; names must be unique in a file", prev)})
			continue
		}
		names[c.Name] = c.Line
		c.File, c.Route = file, route
		if c.Model == "" {
			c.Model = p.fileModel
		}
		cases = append(cases, c)
	}
	return cases, errors.Join(p.errs...)
}

// parser collects the problems of one file.
type parser struct {
	file string
	errs []error
	// fileModel is the file's model:, for the cases that name none.
	fileModel string
	// caseName is the case being read, for errors.
	caseName string
	bad      bool // the case being read has a problem
}

func (p *parser) fail(n *yaml.Node, caseName, field, format string, args ...any) {
	p.bad = true
	p.errs = append(p.errs, &Error{File: p.file, Line: n.Line, Case: caseName, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// failf reports a problem of the case being read.
func (p *parser) failf(n *yaml.Node, field, format string, args ...any) {
	p.fail(n, p.caseName, field, format, args...)
}

// caseKeys are the keys of a case.
var caseKeys = []string{"name", "input", "setup", "expect", "model", "answers"}

func (p *parser) parseCase(n *yaml.Node, i int) (Case, bool) {
	c := Case{Line: n.Line}
	p.caseName, p.bad = fmt.Sprintf("#%d", i+1), false
	if n.Kind != yaml.MappingNode {
		p.failf(n, "", "must be a mapping with the keys %s", strings.Join(caseKeys, ", "))
		return c, false
	}
	for key, val := range yamldoc.Pairs(n) { // name the case in every error
		if key.Value == "name" && val.Kind == yaml.ScalarNode && strings.TrimSpace(val.Value) != "" {
			p.caseName = strings.TrimSpace(val.Value)
		}
	}
	fields := p.mapping(n, "", caseKeys)
	if name := fields["name"]; name != nil && name.Kind == yaml.ScalarNode && strings.TrimSpace(name.Value) != "" {
		c.Name = strings.TrimSpace(name.Value)
		p.caseName = c.Name
	} else {
		p.failf(n, "name", "is missing: give every case a name, unique in its file")
	}
	if in := fields["input"]; in != nil {
		c.Input = p.input(in)
	} else {
		p.failf(n, "input", "is missing: give the case a message or messages to send")
	}
	if s := fields["setup"]; s != nil {
		c.Setup = p.setup(s)
	}
	if m := fields["model"]; m != nil {
		c.Model, _ = p.model(m, "model")
	}
	if a := fields["answers"]; a != nil {
		c.Answers = p.answers(a)
	}
	if e := fields["expect"]; e != nil {
		c.Expect = p.expect(e)
	} else {
		p.failf(n, "expect", "is missing: say what the run must show (plan_completed, tools_called, answer_contains, judge, ...)")
	}
	return c, !p.bad
}

// mapping returns the values of n's keys, reporting keys not in allowed
// and keys given twice. field prefixes the keys in errors.
func (p *parser) mapping(n *yaml.Node, field string, allowed []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.failf(n, field, "must be a mapping with the keys %s", strings.Join(allowed, ", "))
		return out
	}
	for key, val := range yamldoc.Pairs(n) {
		name := joinField(field, key.Value)
		switch {
		case !slices.Contains(allowed, key.Value):
			p.failf(key, name, "field not found; allowed keys: %s", strings.Join(allowed, ", "))
		case out[key.Value] != nil:
			p.failf(key, name, "appears twice; keep one")
		default:
			out[key.Value] = val
		}
	}
	return out
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

var inputKeys = []string{"message", "messages", "params", "state"}

func (p *parser) input(n *yaml.Node) Input {
	var in Input
	f := p.mapping(n, "input", inputKeys)
	if m := f["message"]; m != nil {
		if f["messages"] != nil {
			p.failf(m, "input.message", "give message or messages, not both")
		}
		if text, ok := p.text(m, "input.message"); ok {
			in.Messages = []thread.Message{{Role: thread.RoleUser, Content: text}}
		}
	}
	if m := f["messages"]; m != nil {
		in.Messages = p.messages(m, "input.messages", false)
	}
	if len(in.Messages) == 0 && !p.bad {
		p.failf(n, "input.messages", "is empty: give message: TEXT or messages: [{role: user, content: TEXT}]")
	}
	if m := f["params"]; m != nil {
		p.decode(m, "input.params", &in.Params, "a mapping of param names to text, such as {tenant: acme}")
	}
	if s := f["state"]; s != nil {
		in.State = p.rawMap(s, "input.state")
	}
	return in
}

func (p *parser) setup(n *yaml.Node) Setup {
	f := p.mapping(n, "setup", []string{"messages"})
	var s Setup
	if m := f["messages"]; m != nil {
		s.Messages = p.messages(m, "setup.messages", true)
	}
	return s
}

// messages reads a list of {role, content} (or plain text, a user
// message). onlyUser says every message must be the user's: each is a turn
// run on the thread.
func (p *parser) messages(n *yaml.Node, field string, onlyUser bool) []thread.Message {
	if n.Kind != yaml.SequenceNode {
		p.failf(n, field, "must be a list of messages, each text or {role: user, content: TEXT}")
		return nil
	}
	var out []thread.Message
	for i, item := range n.Content {
		item = yamldoc.Resolve(item)
		at := fmt.Sprintf("%s[%d]", field, i)
		if item.Kind == yaml.ScalarNode {
			if text, ok := p.text(item, at); ok {
				out = append(out, thread.Message{Role: thread.RoleUser, Content: text})
			}
			continue
		}
		f := p.mapping(item, at, []string{"role", "content"})
		msg := thread.Message{Role: thread.RoleUser}
		if r := f["role"]; r != nil {
			msg.Role = r.Value
		}
		roles := []string{thread.RoleUser, thread.RoleAssistant, "system"}
		if onlyUser {
			roles = roles[:1]
		}
		if !slices.Contains(roles, msg.Role) {
			p.failf(item, at+".role", "is %q; use %s", msg.Role, strings.Join(roles, " or "))
			continue
		}
		c := f["content"]
		if c == nil {
			p.failf(item, at+".content", "is missing")
			continue
		}
		if text, ok := p.text(c, at+".content"); ok {
			msg.Content = text
			out = append(out, msg)
		}
	}
	return out
}

func (p *parser) text(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || yamldoc.IsNull(n) || strings.TrimSpace(n.Value) == "" {
		p.failf(n, field, "must be text that is not empty")
		return "", false
	}
	return n.Value, true
}

// decode decodes n into dst, reporting a mismatch as field needing want.
func (p *parser) decode(n *yaml.Node, field string, dst any, want string) bool {
	if err := n.Decode(dst); err != nil {
		p.failf(n, field, "must be %s", want)
		return false
	}
	return true
}

// rawMap reads a mapping of names to any values as JSON.
func (p *parser) rawMap(n *yaml.Node, field string) map[string]json.RawMessage {
	if n.Kind != yaml.MappingNode {
		p.failf(n, field, "must be a mapping of names to values")
		return nil
	}
	out := map[string]json.RawMessage{}
	for key, val := range yamldoc.Pairs(n) {
		var v any
		if !p.decode(val, joinField(field, key.Value), &v, "a value") {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			p.failf(val, joinField(field, key.Value), "cannot be written as JSON (%v); use text, numbers, lists and mappings with text keys", err)
			continue
		}
		out[key.Value] = data
	}
	return out
}
