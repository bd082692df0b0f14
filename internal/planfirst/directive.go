package planfirst

import (
	"errors"
	"fmt"
	"strings"
)

// DirectivePrefix starts every Directive, so a model (the built-in offline
// one) can tell a planning request from a task.
const DirectivePrefix = "PLAN FIRST."

// ReadDirective recovers the task and the subagents from a Directive's
// text; ok is false for any other text.
func ReadDirective(text string) (task string, subagents []string, ok bool) {
	if !strings.HasPrefix(text, DirectivePrefix) {
		return "", nil, false
	}
	const subagentLine = "- subagent (optional): give the step to one of these subagents: "
	for line := range strings.Lines(text) {
		if rest, found := strings.CutPrefix(line, subagentLine); found {
			subagents = strings.Split(strings.TrimSuffix(strings.TrimSpace(rest), "."), ", ")
		}
	}
	_, task, _ = strings.Cut(text, "\nTask:\n")
	return strings.TrimSpace(task), subagents, true
}

// Directive returns the instruction for the planner model: break userTask
// into a plan and answer with the plan as strict JSON only. It states the
// format, the step limit, the deps rule, the placeholder syntax, and which
// routes and subagents a step may be dispatched to (with an empty list, the
// model is told not to use that field).
func Directive(userTask string, routes []string, subagents []string) string {
	var b strings.Builder
	b.WriteString(DirectivePrefix + " Do not do the task and do not call tools. Break the task below into a plan and answer with the plan as one JSON object, with nothing before or after it:\n\n")
	b.WriteString(`{"goal":"<the outcome, one line>","steps":[{"id":"E1","task":"<what to do>","deps":[]},{"id":"E2","task":"<what to do, using #E1.summary>","deps":["E1"]}]}`)
	b.WriteString("\n\nRules:\n")
	fmt.Fprintf(&b, "- Use 1 to %d steps, as few as the task needs. A step runs once the steps it depends on have finished; steps that do not depend on each other may run at the same time.\n", MaxSteps)
	b.WriteString("- id: E1, E2, E3, … in order. Ids must be unique: a letter, then letters, digits, _ or -.\n")
	b.WriteString("- task: a complete instruction. Whoever runs the step sees only this text, not the conversation.\n")
	b.WriteString("- deps: the ids of earlier steps whose results this step needs. Only earlier steps.\n")
	b.WriteString("- To pass an earlier step's result into a task, write a placeholder: #E1 is its whole output, #E1.summary its first line, #E1.head=200 its first 200 characters, #E1.last=200 its last 200 characters. A placeholder also makes the step depend on E1. Use # only for placeholders, and follow one with a space or punctuation.\n")
	if len(subagents) > 0 {
		fmt.Fprintf(&b, "- subagent (optional): give the step to one of these subagents: %s.\n", strings.Join(subagents, ", "))
	} else {
		b.WriteString("- Do not set subagent: none is available.\n")
	}
	if len(routes) > 0 {
		fmt.Fprintf(&b, "- route (optional): give the step to one of these routes: %s.\n", strings.Join(routes, ", "))
	} else {
		b.WriteString("- Do not set route: none is available.\n")
	}
	b.WriteString("- Set at most one of route and subagent. A step with neither is run by the current agent.\n")
	b.WriteString("- If a step fails, later steps still run and see the error in its placeholder.\n")
	b.WriteString("\nTask:\n")
	b.WriteString(strings.TrimSpace(userTask))
	b.WriteString("\n")
	return b.String()
}

// Feedback returns the message that sends a Parse, Validate or CheckTargets
// error back to the planner for its one retry: the problems, then the
// request to answer with the corrected plan only.
func Feedback(err error) string {
	var b strings.Builder
	b.WriteString("Your plan could not be used.\n")
	var ve *ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	} else if err != nil {
		fmt.Fprintf(&b, "- %s\n", err)
	}
	b.WriteString("Answer again with the corrected plan as one JSON object and nothing else.\n")
	return b.String()
}
