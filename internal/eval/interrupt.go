package eval

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Interrupt is one interrupt a run parked on: its id, kind and name (the
// tool, path or command it asks about), and the decision the case
// answered it with ("" when none did).
type Interrupt struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Answered string `json:"answered,omitempty"`
}

// InterruptMatcher matches an interrupt by kind and, when set, name.
type InterruptMatcher struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

func (m InterruptMatcher) matches(in Interrupt) bool {
	return in.Kind == m.Kind && (m.Name == "" || in.Name == m.Name)
}

func (m InterruptMatcher) String() string {
	if m.Name == "" {
		return m.Kind
	}
	return m.Kind + " " + m.Name
}

// Answer is a case's scripted answer to the interrupts of a kind (and
// name): Decision is approve, deny or edit. An edit sends Args as a
// tool call's new arguments, or Payload as it is for any kind.
type Answer struct {
	InterruptMatcher
	Decision string          `json:"decision"`
	Args     json.RawMessage `json:"args,omitempty"`
	Payload  json.RawMessage `json:"payload,omitempty"`
}

// Decisions an answer may give.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionEdit    = "edit"
)

// Interrupt kinds whose decision words differ from a tool call's.
const (
	kindTool = "tool"
	kindPlan = "plan"
	kindStep = "step"
)

// payload is the resume payload of a for in, and whether it is a denial
// sent as a cancel.
func (a Answer) payload(in Interrupt) (json.RawMessage, error) {
	word := func(approve, deny string) json.RawMessage {
		if a.Decision == DecisionApprove {
			return json.RawMessage(`"` + approve + `"`)
		}
		return json.RawMessage(`"` + deny + `"`)
	}
	switch {
	case a.Decision == DecisionEdit && a.Payload != nil:
		return a.Payload, nil
	case a.Decision == DecisionEdit && in.Kind == kindTool:
		return json.Marshal(map[string]any{"decision": "edit", "args": a.Args})
	case a.Decision == DecisionEdit:
		return nil, fmt.Errorf("answers: an edit of a %s interrupt needs payload: the decision to send", in.Kind)
	case in.Kind == kindPlan:
		return word("approve", "reject"), nil
	case in.Kind == kindStep:
		return word("continue", "cancel"), nil
	}
	return word("once", "deny"), nil
}

// answerFor returns the case's answer to in, the first that matches.
func (c *Case) answerFor(in Interrupt) (Answer, bool) {
	for _, a := range c.Answers {
		if a.matches(in) {
			return a, true
		}
	}
	return Answer{}, false
}

// readInterrupt reads an interrupt event's data. The name is the
// detail's toolName, else its name, path or command.
func readInterrupt(data json.RawMessage) Interrupt {
	var ev struct {
		ID     string                     `json:"interruptId"`
		Kind   string                     `json:"kind"`
		Detail map[string]json.RawMessage `json:"detail"`
	}
	_ = json.Unmarshal(data, &ev)
	in := Interrupt{ID: ev.ID, Kind: ev.Kind}
	for _, key := range []string{"toolName", "name", "path", "command"} {
		var s string
		if json.Unmarshal(ev.Detail[key], &s) == nil && s != "" {
			in.Name = s
			break
		}
	}
	return in
}

// runFailure is the run expectation's verdict: the run's error, or that
// it parked when the case neither answers nor expects that interrupt.
func runFailure(e Expect, o Observation) string {
	if o.Err != "" || !o.Parked || len(o.Interrupts) == 0 {
		return o.Err
	}
	last := o.Interrupts[len(o.Interrupts)-1]
	if e.Interrupt != nil && e.Interrupt.matches(last) {
		return "" // parking there is what the case expects
	}
	return fmt.Sprintf("the run parked on interrupt %s %s, waiting for a person's decision; answer it with answers: [{kind: %s, decision: approve}] (or deny, edit), or expect it with expect: {interrupt: {kind: %s}}",
		last.Kind, last.Name, last.Kind, last.Kind)
}

func checkInterrupt(want InterruptMatcher, got []Interrupt) string {
	if slices.ContainsFunc(got, want.matches) {
		return ""
	}
	if len(got) == 0 {
		return "the run parked on no interrupt, want " + want.String()
	}
	seen := make([]string, len(got))
	for i, in := range got {
		seen[i] = InterruptMatcher{Kind: in.Kind, Name: in.Name}.String()
	}
	return fmt.Sprintf("no interrupt matches %s; the run parked on %s", want, strings.Join(seen, ", "))
}

func (p *parser) interruptMatcher(n *yaml.Node) *InterruptMatcher {
	m := p.matcher(n, "expect.interrupt", p.mapping(n, "expect.interrupt", []string{"kind", "name"}))
	return &m
}

// matcher reads kind and name from the fields f of mapping n.
func (p *parser) matcher(n *yaml.Node, field string, f map[string]*yaml.Node) InterruptMatcher {
	var m InterruptMatcher
	if v := f["kind"]; v != nil {
		m.Kind, _ = p.text(v, field+".kind")
	} else if n.Kind == yaml.MappingNode {
		p.failf(n, field+".kind", "is missing: name the interrupt's kind (tool, path, command, plan, step, ...)")
	}
	if v := f["name"]; v != nil {
		m.Name, _ = p.text(v, field+".name")
	}
	return m
}

var answerKeys = []string{"kind", "name", "decision", "args", "payload"}

// answers reads a list of {kind, name, decision, args, payload}.
func (p *parser) answers(n *yaml.Node) []Answer {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.failf(n, "answers", "must be a list of answers, each {kind, name, decision: approve|deny|edit}")
		return nil
	}
	var out []Answer
	for i, item := range n.Content {
		item = yamldoc.Resolve(item)
		at := fmt.Sprintf("answers[%d]", i)
		f := p.mapping(item, at, answerKeys)
		a := Answer{InterruptMatcher: p.matcher(item, at, f)}
		decisions := []string{DecisionApprove, DecisionDeny, DecisionEdit}
		if v := f["decision"]; v == nil || !slices.Contains(decisions, v.Value) {
			p.failf(item, at+".decision", "must be one of %s", strings.Join(decisions, ", "))
		} else {
			a.Decision = v.Value
		}
		if v := f["args"]; v != nil {
			a.Args = p.rawJSON(v, at+".args")
		}
		if v := f["payload"]; v != nil {
			a.Payload = p.rawJSON(v, at+".payload")
		}
		if a.Decision == DecisionEdit && a.Args == nil && a.Payload == nil {
			p.failf(item, at, "an edit needs args: (a tool call's new arguments) or payload: (the decision to send)")
		}
		out = append(out, a)
	}
	return out
}

// rawJSON reads any value as JSON.
func (p *parser) rawJSON(n *yaml.Node, field string) json.RawMessage {
	var v any
	if !p.decode(n, field, &v, "a value") {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		p.failf(n, field, "cannot be written as JSON (%v); use text, numbers, lists and mappings with text keys", err)
		return nil
	}
	return data
}

// model reads a model name; a script:FILE with a relative FILE is made
// absolute from the eval file's folder.
func (p *parser) model(n *yaml.Node, field string) (string, bool) {
	text, ok := p.text(n, field)
	if !ok {
		return "", false
	}
	if _, err := models.ParseSpecList(text); err != nil {
		p.failf(n, field, "%v", err)
		return "", false
	}
	dir, err := filepath.Abs(filepath.Dir(p.file))
	if err != nil {
		dir = filepath.Dir(p.file)
	}
	return models.ScriptInDir(text, dir), true
}
