package planfirst_test

import (
	"testing"

	engine "github.com/dawn-go/dawn/internal/planfirst"
	"github.com/dawn-go/dawn/planfirst"
)

// TestNamesMatchTheEngine: the public names are the ones the engine reads
// and writes, so an app that keys on them sees what the run does.
func TestNamesMatchTheEngine(t *testing.T) {
	m := planfirst.Marker()
	for _, c := range []struct{ name, public, engine string }{
		{"Name", planfirst.Name, m.Name()},
		{"ConfigKey", planfirst.ConfigKey, engine.ConfigKey},
		{"RunOption", planfirst.RunOption, engine.RunOption},
		{"EventPlanPreview", planfirst.EventPlanPreview, engine.EventPlanPreview},
		{"PlanKind", planfirst.PlanKind, engine.PlanKind},
		{"StepKind", planfirst.StepKind, engine.StepKind},
	} {
		if c.public != c.engine {
			t.Errorf("planfirst.%s = %q; the engine uses %q", c.name, c.public, c.engine)
		}
	}
}
