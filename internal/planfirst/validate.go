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
	v := &validation{p: p}
	if len(p.Steps) > MaxSteps {
		v.add("more than %d steps (got %d); merge related steps", MaxSteps, len(p.Steps))
	}
	v.normalize()
	for i := range p.Steps {
		label := v.checkStep(i)
		p.Steps[i].Deps = v.deps(i, label)
	}
	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

// validation is one run of Validate: the plan, where each valid id first
// appears, and the problems found so far.
type validation struct {
	p        *Plan
	pos      map[string]int // id -> first position, for valid ids
	problems []string
}

func (v *validation) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validation) known(id string) bool { _, ok := v.pos[id]; return ok }

// normalize trims every field of the plan and records the first position
// of each valid id.
func (v *validation) normalize() {
	p := v.p
	p.Goal = strings.TrimSpace(p.Goal)
	v.pos = make(map[string]int, len(p.Steps))
	for i := range p.Steps {
		s := &p.Steps[i]
		s.ID = strings.TrimSpace(s.ID)
		s.Task = strings.TrimSpace(s.Task)
		s.Route = strings.TrimSpace(s.Route)
		s.Subagent = strings.TrimSpace(s.Subagent)
		if _, seen := v.pos[s.ID]; !seen && ValidID(s.ID) {
			v.pos[s.ID] = i
		}
	}
}

// checkStep reports the problems of step i's id, task and target, and
// returns the label that names the step in its other problems.
func (v *validation) checkStep(i int) string {
	s := &v.p.Steps[i]
	n := i + 1
	label := fmt.Sprintf("step %d (%s)", n, s.ID)
	switch {
	case s.ID == "":
		v.add("step %d: id is empty; give every step an id like E%d", n, n)
		label = fmt.Sprintf("step %d", n)
	case !ValidID(s.ID):
		v.add("step %d: id %q is not valid; use a letter, then letters, digits, _ or -, at most %d characters, like E%d", n, s.ID, MaxIDLen, n)
		label = fmt.Sprintf("step %d", n)
	case v.pos[s.ID] != i:
		v.add("step %d: id %q is used twice; ids must be unique", n, s.ID)
	}
	if s.Task == "" {
		v.add("%s: task is empty; say what the step must do", label)
	}
	if s.Route != "" && s.Subagent != "" {
		v.add("%s: both route and subagent are set; pick one", label)
	}
	return label
}

// deps checks step i's deps and the placeholders of its task, and returns
// its deps normalized: the earlier steps it names either way, once each,
// in plan order (nil for none).
func (v *validation) deps(i int, label string) []string {
	s := &v.p.Steps[i]
	deps := make([]string, 0, len(s.Deps))
	addDep := func(id string) {
		if !slices.Contains(deps, id) {
			deps = append(deps, id)
		}
	}
	for _, d := range s.Deps {
		d = strings.TrimSpace(d)
		switch j, ok := v.pos[d]; {
		case d == s.ID && d != "":
			v.add("%s: deps names the step itself; list only earlier steps", label)
		case !ok || j >= i:
			v.add("%s: deps names %q, which is not an earlier step", label, d)
		default:
			addDep(d)
		}
	}
	for _, r := range scanRefs(s.Task, v.known) {
		j, ok := v.pos[r.id]
		switch {
		case r.problem != "":
			v.add("%s: task has %s", label, r.problem)
		case ok && j == i:
			v.add("%s: task references #%s, the step itself; a step can only use earlier steps' outputs", label, r.id)
		case !ok || j > i:
			v.add("%s: task references #%s, which is not declared before it", label, r.id)
		default:
			addDep(r.id) // implicit dependency
		}
	}
	slices.SortFunc(deps, func(a, b string) int { return v.pos[a] - v.pos[b] })
	if len(deps) == 0 {
		return nil
	}
	return deps
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
