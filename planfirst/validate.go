package planfirst

import (
	"fmt"
	"slices"
	"strings"
)

// ValidationError lists everything wrong with a plan, one problem per entry,
// in a form the planner model can act on. Parse and Validate return it for
// every failure, so its Error text can be sent back to the model as is.
type ValidationError struct {
	Problems []string
}

// Error returns the problems, one per line, after a heading line.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "plan is not valid: " + e.Problems[0]
	}
	return "plan is not valid:\n- " + strings.Join(e.Problems, "\n- ")
}

// Validate checks p and normalizes it in place. It reports, all at once:
//   - no steps, or more than MaxSteps;
//   - a step id that is empty, malformed (see ValidID) or used twice;
//   - an empty task;
//   - a step with both route and subagent;
//   - a deps entry that does not name an earlier step (which also rules out
//     cycles: every edge points backwards in the list);
//   - a placeholder in a task that names no earlier step, has an unknown
//     suffix (#E1.foo) or a bad count (#E1.head=0).
//
// Normalizing trims every field, drops repeated deps, adds the steps a task
// references through placeholders as implicit deps, and sorts each step's
// deps by their position in the plan. It happens even when p is not valid.
func Validate(p *Plan) error {
	if p == nil || len(p.Steps) == 0 {
		return &ValidationError{Problems: []string{"no steps; return at least one step"}}
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(p.Steps) > MaxSteps {
		add("more than %d steps (got %d); merge related steps", MaxSteps, len(p.Steps))
	}
	p.Goal = strings.TrimSpace(p.Goal)

	pos := make(map[string]int, len(p.Steps)) // id -> first position
	for i := range p.Steps {
		s := &p.Steps[i]
		s.ID = strings.TrimSpace(s.ID)
		s.Task = strings.TrimSpace(s.Task)
		s.Route = strings.TrimSpace(s.Route)
		s.Subagent = strings.TrimSpace(s.Subagent)
		if _, seen := pos[s.ID]; !seen && ValidID(s.ID) {
			pos[s.ID] = i
		}
	}
	known := func(id string) bool { _, ok := pos[id]; return ok }

	for i := range p.Steps {
		s := &p.Steps[i]
		n := i + 1
		label := fmt.Sprintf("step %d (%s)", n, s.ID)
		switch {
		case s.ID == "":
			add("step %d: id is empty; give every step an id like E%d", n, n)
			label = fmt.Sprintf("step %d", n)
		case !ValidID(s.ID):
			add("step %d: id %q is not valid; use a letter, then letters, digits, _ or -, at most %d characters, like E%d", n, s.ID, MaxIDLen, n)
			label = fmt.Sprintf("step %d", n)
		case pos[s.ID] != i:
			add("step %d: id %q is used twice; ids must be unique", n, s.ID)
		}
		if s.Task == "" {
			add("%s: task is empty; say what the step must do", label)
		}
		if s.Route != "" && s.Subagent != "" {
			add("%s: both route and subagent are set; pick one", label)
		}

		deps := make([]string, 0, len(s.Deps))
		addDep := func(id string) {
			if !slices.Contains(deps, id) {
				deps = append(deps, id)
			}
		}
		for _, d := range s.Deps {
			d = strings.TrimSpace(d)
			switch j, ok := pos[d]; {
			case d == s.ID && d != "":
				add("%s: deps names the step itself; list only earlier steps", label)
			case !ok || j >= i:
				add("%s: deps names %q, which is not an earlier step", label, d)
			default:
				addDep(d)
			}
		}
		for _, r := range scanRefs(s.Task, known) {
			j, ok := pos[r.id]
			switch {
			case r.problem != "":
				add("%s: task has %s", label, r.problem)
			case ok && j == i:
				add("%s: task references #%s, the step itself; a step can only use earlier steps' outputs", label, r.id)
			case !ok || j > i:
				add("%s: task references #%s, which is not declared before it", label, r.id)
			default:
				addDep(r.id) // implicit dependency
			}
		}
		slices.SortFunc(deps, func(a, b string) int { return pos[a] - pos[b] })
		if len(deps) == 0 {
			deps = nil
		}
		s.Deps = deps
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// CheckTargets reports steps whose route or subagent is not in the given
// lists (the app's route ids and the current route's subagents). Validate
// cannot do this because it does not know the app. The error is a
// *ValidationError, so it can be sent back to the planner like any other.
func CheckTargets(p *Plan, routes, subagents []string) error {
	var problems []string
	for i, s := range p.Steps {
		if s.Route != "" && !slices.Contains(routes, s.Route) {
			problems = append(problems, fmt.Sprintf("step %d (%s): route %q does not exist; use one of: %s", i+1, s.ID, s.Route, listOrNone(routes)))
		}
		if s.Subagent != "" && !slices.Contains(subagents, s.Subagent) {
			problems = append(problems, fmt.Sprintf("step %d (%s): subagent %q does not exist; use one of: %s", i+1, s.ID, s.Subagent, listOrNone(subagents)))
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none; leave it out)"
	}
	return strings.Join(names, ", ")
}
