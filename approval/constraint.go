package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/capabilities"
)

// Outcome is what a Constraint decides of one call.
type Outcome int

// Outcomes.
const (
	// Run runs the call.
	Run Outcome = iota
	// Refuse skips the call; the model gets the reason as its result.
	Refuse
	// Ask asks a person, as a call of a tool under approve: does.
	Ask
)

// Decision is a Constraint's verdict on one call.
type Decision struct {
	Outcome Outcome
	// Reason is what the model is told of a denied call, or what the
	// person is shown of an escalated one.
	Reason string
}

// Constraint decides, from a call's arguments, whether a call of one tool
// runs, is denied, or waits for a person. ctx carries the call's
// invocation (route parameters, the store) as a tool's does. An error, or
// a panic, denies the call.
type Constraint func(ctx context.Context, args json.RawMessage) (Decision, error)

// Constrain returns ms with the approval marker holding constraints, by
// tool name, added to any it holds; several constraints of one tool all
// judge each call (the first deny wins, any escalation asks). A list
// without the approval marker is returned as it is.
func Constrain(ms []capabilities.Marker, constraints map[string][]Constraint) []capabilities.Marker {
	out := slices.Clone(ms)
	for i, m := range out {
		mk, ok := m.(marker)
		if !ok {
			continue
		}
		all := map[string][]Constraint{}
		for name, cs := range mk.constraints {
			all[name] = slices.Clone(cs)
		}
		for name, cs := range constraints {
			all[name] = append(all[name], cs...)
		}
		mk.constraints = all
		out[i] = mk
	}
	return out
}

// judgeCall runs the constraints of one call in order: the first deny
// wins, any escalation asks, and an error or a panic denies.
func judgeCall(ctx context.Context, tool string, cs []Constraint, args json.RawMessage) Decision {
	out := Decision{Outcome: Run}
	for _, c := range cs {
		d, err := runConstraint(ctx, c, args)
		if err != nil {
			return Decision{Outcome: Refuse, Reason: fmt.Sprintf("the app's constraint on tool %q failed (%v), so the call was not run", tool, err)}
		}
		switch d.Outcome {
		case Refuse:
			if d.Reason == "" {
				d.Reason = fmt.Sprintf("the app's constraint on tool %q denies this call", tool)
			}
			return d
		case Ask:
			if out.Outcome != Ask {
				out = d
			}
		case Run:
		default:
			return Decision{Outcome: Refuse, Reason: fmt.Sprintf("the app's constraint on tool %q returned an unknown decision, so the call was not run", tool)}
		}
	}
	return out
}

func runConstraint(ctx context.Context, c Constraint, args json.RawMessage) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c(ctx, args)
}
