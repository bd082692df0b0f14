package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

var expectKeys = append([]string{
	ExpectPlanCompleted, ExpectTodos, ExpectToolsCalled, ExpectToolsNotCalled,
	ExpectAnswerContains, ExpectAnswerMatches, ExpectMaxTurns, ExpectMaxInputTokens, ExpectJudge,
	ExpectInterrupt,
}, driftKeys...)

// statuses are the plan item statuses a todos expectation may name.
var statuses = []string{"pending", "in_progress", "completed"}

func (p *parser) expect(n *yaml.Node) Expect {
	var e Expect
	f := p.mapping(n, "expect", expectKeys)
	if len(f) == 0 && n.Kind == yaml.MappingNode {
		p.failf(n, "expect", "is empty: name at least one of %s", strings.Join(expectKeys, ", "))
	}
	if v := f[ExpectPlanCompleted]; v != nil {
		var b bool
		if p.decode(v, "expect.plan_completed", &b, "true or false") {
			e.PlanCompleted = &b
		}
	}
	if v := f[ExpectTodos]; v != nil {
		e.Todos = p.todos(v)
	}
	if v := f[ExpectToolsCalled]; v != nil {
		e.ToolsCalled, e.ToolsInOrder = p.toolsCalled(v)
	}
	if v := f[ExpectToolsNotCalled]; v != nil {
		e.ToolsNotCalled = p.texts(v, "expect.tools_not_called", "tool names")
	}
	if v := f[ExpectAnswerContains]; v != nil {
		e.AnswerContains = p.texts(v, "expect.answer_contains", "texts")
	}
	if v := f[ExpectAnswerMatches]; v != nil {
		if text, ok := p.text(v, "expect.answer_matches"); ok {
			re, err := regexp.Compile(text)
			if err != nil {
				p.failf(v, "expect.answer_matches", "is not a regular expression (Go RE2 syntax): %v", err)
			}
			e.AnswerMatches, e.answerRE = text, re
		}
	}
	if v := f[ExpectMaxTurns]; v != nil {
		p.positive(v, "expect.max_turns", &e.MaxTurns)
	}
	if v := f[ExpectMaxInputTokens]; v != nil {
		var n int
		p.positive(v, "expect.max_input_tokens", &n)
		e.MaxInputTokens = int64(n)
	}
	if v := f[ExpectJudge]; v != nil {
		e.Judge = p.judge(v)
	}
	p.drift(f, &e.DriftExpect)
	if v := f[ExpectInterrupt]; v != nil {
		e.Interrupt = p.interruptMatcher(v)
	}
	return e
}

func (p *parser) positive(n *yaml.Node, field string, dst *int) {
	if !p.decode(n, field, dst, "a whole number above 0") {
		return
	}
	if *dst <= 0 {
		p.failf(n, field, "is %d; it must be above 0", *dst)
	}
}

// texts reads one text or a list of texts.
func (p *parser) texts(n *yaml.Node, field, what string) []string {
	if n.Kind == yaml.ScalarNode {
		if t, ok := p.text(n, field); ok {
			return []string{t}
		}
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.failf(n, field, "must be a list of %s", what)
		return nil
	}
	var out []string
	for i, item := range n.Content {
		if t, ok := p.text(yamldoc.Resolve(item), fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, t)
		}
	}
	return out
}

func (p *parser) todos(n *yaml.Node) []Todo {
	if n.Kind != yaml.SequenceNode {
		p.failf(n, "expect.todos", "must be a list of {content, status}; [] expects an empty plan")
		return nil
	}
	out := []Todo{}
	for i, item := range n.Content {
		at := fmt.Sprintf("expect.todos[%d]", i)
		f := p.mapping(yamldoc.Resolve(item), at, []string{"content", "status"})
		var t Todo
		if c := f["content"]; c != nil {
			t.Content, _ = p.text(c, at+".content")
		} else {
			p.failf(item, at+".content", "is missing")
		}
		if s := f["status"]; s != nil && slices.Contains(statuses, s.Value) {
			t.Status = s.Value
		} else {
			p.failf(item, at+".status", "must be one of %s", strings.Join(statuses, ", "))
		}
		out = append(out, t)
	}
	return out
}

// toolsCalled reads a list of tool matchers, or {in_order, calls}.
func (p *parser) toolsCalled(n *yaml.Node) ([]ToolMatcher, bool) {
	const field = "expect.tools_called"
	list, inOrder := n, false
	if n.Kind == yaml.MappingNode {
		f := p.mapping(n, field, []string{"in_order", "calls"})
		if v := f["in_order"]; v != nil {
			p.decode(v, field+".in_order", &inOrder, "true or false")
		}
		list = f["calls"]
		if list == nil {
			p.failf(n, field+".calls", "is missing: list the calls, each a tool name or {name, args, args_match}")
			return nil, inOrder
		}
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		p.failf(list, field, "must be a list of calls, each a tool name or {name, args, args_match}")
		return nil, inOrder
	}
	var out []ToolMatcher
	for i, item := range list.Content {
		if m, ok := p.toolMatcher(yamldoc.Resolve(item), fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, m)
		}
	}
	return out, inOrder
}

func (p *parser) toolMatcher(n *yaml.Node, at string) (ToolMatcher, bool) {
	if n.Kind == yaml.ScalarNode {
		name, ok := p.text(n, at)
		return ToolMatcher{Name: name}, ok
	}
	f := p.mapping(n, at, []string{"name", "args", "args_match"})
	var m ToolMatcher
	ok := true
	if v := f["name"]; v != nil {
		m.Name, ok = p.text(v, at+".name")
	} else {
		p.failf(n, at+".name", "is missing")
		ok = false
	}
	if v := f["args"]; v != nil {
		m.Args = p.rawMap(v, at+".args")
	}
	if v := f["args_match"]; v != nil && p.decode(v, at+".args_match", &m.ArgsMatch, "a mapping of argument names to regular expressions") {
		m.argsRE = map[string]*regexp.Regexp{}
		for k, expr := range m.ArgsMatch {
			re, err := regexp.Compile(expr)
			if err != nil {
				p.failf(v, at+".args_match."+k, "is not a regular expression (Go RE2 syntax): %v", err)
				ok = false
				continue
			}
			m.argsRE[k] = re
		}
	}
	return m, ok
}

func (p *parser) judge(n *yaml.Node) *Judge {
	j := &Judge{Threshold: DefaultThreshold}
	if n.Kind == yaml.ScalarNode || n.Kind == yaml.SequenceNode {
		j.Criteria = p.texts(n, "expect.judge", "criteria")
		return j
	}
	f := p.mapping(n, "expect.judge", []string{"criteria", "threshold"})
	if v := f["criteria"]; v != nil {
		j.Criteria = p.texts(v, "expect.judge.criteria", "criteria")
	} else {
		p.failf(n, "expect.judge.criteria", "is missing: list what the answer must do, each scored from 0 to 1")
	}
	if v := f["threshold"]; v != nil && p.decode(v, "expect.judge.threshold", &j.Threshold, "a number from 0 to 1") {
		if j.Threshold < 0 || j.Threshold > 1 {
			p.failf(v, "expect.judge.threshold", "is %v; it must be from 0 to 1", j.Threshold)
		}
	}
	return j
}
