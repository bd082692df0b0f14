package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Result is one expectation's verdict on one run.
type Result struct {
	Expectation string `json:"expectation"`
	Pass        bool   `json:"pass"`
	// Detail says why it failed, or what a judge scored.
	Detail string `json:"detail,omitempty"`
}

// Check checks o against e, except the judge, and returns a result per
// expectation in e.Names order (the judge's left out).
func Check(e Expect, o Observation) []Result {
	var out []Result
	add := func(name, failure string) {
		out = append(out, Result{Expectation: name, Pass: failure == "", Detail: failure})
	}
	add(ExpectRun, runFailure(e, o))
	if o.Err != "" {
		// A run that failed shows nothing to check: say so, not that the
		// plan or the answer is missing.
		for _, name := range e.Names()[1:] {
			if name != ExpectJudge {
				add(name, "not checked: the run failed")
			}
		}
		return out
	}
	if e.PlanCompleted != nil {
		add(ExpectPlanCompleted, checkPlanCompleted(*e.PlanCompleted, o.Todos))
	}
	if e.Todos != nil {
		add(ExpectTodos, checkTodos(e.Todos, o.Todos))
	}
	if len(e.ToolsCalled) > 0 {
		add(ExpectToolsCalled, checkToolsCalled(e.ToolsCalled, e.ToolsInOrder, o.Calls))
	}
	if len(e.ToolsNotCalled) > 0 {
		add(ExpectToolsNotCalled, checkToolsNotCalled(e.ToolsNotCalled, o.Calls))
	}
	if len(e.AnswerContains) > 0 {
		add(ExpectAnswerContains, checkContains(e.AnswerContains, o.Answer))
	}
	if e.AnswerMatches != "" {
		add(ExpectAnswerMatches, checkMatches(e, o.Answer))
	}
	if e.MaxTurns > 0 && o.Turns > e.MaxTurns {
		add(ExpectMaxTurns, fmt.Sprintf("the run took %d model turns, over %d", o.Turns, e.MaxTurns))
	} else if e.MaxTurns > 0 {
		add(ExpectMaxTurns, "")
	}
	if e.MaxInputTokens > 0 {
		add(ExpectMaxInputTokens, checkTokens(e.MaxInputTokens, o))
	}
	if e.Interrupt != nil {
		add(ExpectInterrupt, checkInterrupt(*e.Interrupt, o.Interrupts))
	}
	return append(out, checkDrift(e.DriftExpect, o)...)
}

func checkPlanCompleted(want bool, todos []Todo) string {
	if todos == nil {
		return "the route has no plan (no todos in the final state)"
	}
	open := 0
	for _, t := range todos {
		if t.Status != "completed" {
			open++
		}
	}
	done := len(todos) > 0 && open == 0
	switch {
	case want && len(todos) == 0:
		return "the final plan is empty"
	case want && !done:
		return fmt.Sprintf("%d of %d plan items are not completed: %s", open, len(todos), showTodos(todos))
	case !want && done:
		return "every plan item is completed"
	}
	return ""
}

func checkTodos(want, got []Todo) string {
	if slices.Equal(want, got) {
		return ""
	}
	if got == nil {
		return "the route has no plan (no todos in the final state)"
	}
	return fmt.Sprintf("the final plan is %s, want %s", showTodos(got), showTodos(want))
}

func showTodos(todos []Todo) string {
	parts := make([]string, len(todos))
	for i, t := range todos {
		parts[i] = fmt.Sprintf("%q %s", t.Content, t.Status)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkToolsCalled finds a call for each matcher: any call, or with
// inOrder calls in the matchers' order (other calls may come between).
func checkToolsCalled(want []ToolMatcher, inOrder bool, calls []Call) string {
	next := 0
	for _, m := range want {
		from := 0
		if inOrder {
			from = next
		}
		i := slices.IndexFunc(calls[from:], m.matches)
		if i < 0 {
			where := ""
			if inOrder && from > 0 {
				where = " after the earlier expected calls"
			}
			return fmt.Sprintf("no call%s matches %s; the calls were %s", where, m.describe(), showCalls(calls))
		}
		next = from + i + 1
	}
	return ""
}

func checkToolsNotCalled(names []string, calls []Call) string {
	for _, c := range calls {
		if slices.Contains(names, c.Name) {
			return fmt.Sprintf("%s was called with %s", c.Name, c.Input)
		}
	}
	return ""
}

func showCalls(calls []Call) string {
	if len(calls) == 0 {
		return "none"
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// matches reports whether c is a call m expects.
func (m ToolMatcher) matches(c Call) bool {
	if c.Name != m.Name {
		return false
	}
	if len(m.Args) == 0 && len(m.argsRE) == 0 {
		return true
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(c.Input, &args) != nil {
		return false
	}
	for k, want := range m.Args {
		if !sameJSON(args[k], want) {
			return false
		}
	}
	for k, re := range m.argsRE {
		v, ok := args[k]
		if !ok {
			return false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

func (m ToolMatcher) describe() string {
	s := m.Name
	if len(m.Args) > 0 {
		data, _ := json.Marshal(m.Args)
		s += " with args " + string(data)
	}
	if len(m.ArgsMatch) > 0 {
		data, _ := json.Marshal(m.ArgsMatch)
		s += " with args matching " + string(data)
	}
	return s
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	if a == nil {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return bytes.Equal(ca, cb)
}

func checkContains(want []string, answer string) string {
	var missing []string
	for _, w := range want {
		if !strings.Contains(answer, w) {
			missing = append(missing, fmt.Sprintf("%q", w))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("the answer lacks %s: %s", strings.Join(missing, ", "), clip(answer))
}

func checkMatches(e Expect, answer string) string {
	if e.answerRE == nil || e.answerRE.MatchString(answer) {
		return ""
	}
	return fmt.Sprintf("the answer does not match /%s/: %s", e.AnswerMatches, clip(answer))
}

func checkTokens(limit int64, o Observation) string {
	switch {
	case o.Turns > 0 && !o.TokensKnown:
		return "the model reported no input token counts, so the limit cannot be checked; use a model that reports usage"
	case o.MaxInputTokens > limit:
		return fmt.Sprintf("a model call took %d input tokens, over %d", o.MaxInputTokens, limit)
	}
	return ""
}

// clip quotes s, cut to a readable length on a character boundary.
func clip(s string) string {
	const n = 200
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}
