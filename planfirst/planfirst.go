package planfirst

import (
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	engine "github.com/dawn-go/dawn/internal/planfirst"
	"github.com/dawn-go/dawn/planning"
)

// Marker returns the plan-first capability. It contributes no tools or
// state to a route, so it detects nothing: plan-first runs on routes whose
// plan the harness owns (plan.md with enforce: true). It reads dawn.yaml's
// plan_first section (capabilities.ConfigSection) and runs a route plan
// first when asked (capabilities.RunStrategy).
func Marker() capabilities.Marker { return engine.Marker() }

// The names plan-first answers to, in files, run bodies and streams.
const (
	// Name is the capability's name in GET /routes and dawn routes.
	Name = "plan_first"
	// ConfigKey is plan-first's dawn.yaml section, {mode, threshold,
	// parallel}.
	ConfigKey = "plan_first"
	// RunOption is the key of a run's body that overrides the mode for
	// one run: "off", "auto", "always" or "preview".
	RunOption = "plan_first"
	// EventPlanPreview is the stream event of a previewed plan: {plan,
	// order, text, interruptId}.
	EventPlanPreview = "plan_preview"
	// PlanKind is the kind of the interrupt a plan waiting for a person's
	// approval parks on; it takes "approve", "reject" or an edited plan.
	PlanKind = planning.PlanKind
	// StepKind is the kind of the interrupt an advance: manual run parks
	// on after each step; it takes "continue", "skip" or "cancel".
	StepKind = harness.StepKind
)
