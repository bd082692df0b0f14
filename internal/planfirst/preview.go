package planfirst

import (
	"fmt"
	"strings"
)

// PreviewJSON is the dry-run answer of the API: the validated plan and the
// order its steps would run in.
type PreviewJSON struct {
	Plan  *Plan    `json:"plan"`
	Order []string `json:"order"`
}

// PreviewData returns the dry-run answer for p.
func PreviewData(p *Plan) PreviewJSON {
	return PreviewJSON{Plan: p, Order: Order(p)}
}

// Preview renders p for a person reviewing it before it runs (dawn run
// --plan-preview): the goal, each step in execution order with its deps and
// where it is dispatched, then the execution order on one line. Nothing is
// executed.
func Preview(p *Plan) string {
	var b strings.Builder
	if p.Goal != "" {
		fmt.Fprintf(&b, "Goal: %s\n", p.Goal)
	}
	order := orderIndices(p)
	fmt.Fprintf(&b, "Plan: %d %s (preview, nothing was run)\n", len(order), plural(len(order), "step", "steps"))
	width := len(fmt.Sprint(len(order)))
	for k, i := range order {
		s := p.Steps[i]
		fmt.Fprintf(&b, "  %*d. %s: %s\n", width, k+1, s.ID, s.Task)
		var notes []string
		if len(s.Deps) > 0 {
			notes = append(notes, "after "+strings.Join(s.Deps, ", "))
		}
		if s.Route != "" {
			notes = append(notes, "route "+s.Route)
		}
		if s.Subagent != "" {
			notes = append(notes, "subagent "+s.Subagent)
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, "  %*s  (%s)\n", width, "", strings.Join(notes, "; "))
		}
	}
	fmt.Fprintf(&b, "Order: %s\n", strings.Join(Order(p), " → "))
	return b.String()
}
