package planfirst

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

// Name is the capability's name.
const Name = "plan_first"

// ConfigKey is plan-first's dawn.yaml section, {mode, threshold, parallel}:
// the app's default for routes whose plan.md front matter sets none.
const ConfigKey = "plan_first"

// Marker returns the plan-first capability. It contributes no tools or
// state to a route, so it detects nothing: plan-first runs on routes whose
// plan the harness owns (plan.md with enforce: true). It reads dawn.yaml's
// plan_first section (capabilities.ConfigSection).
func Marker() capabilities.Marker { return marker{} }

// DefaultParallel is how many independent steps a plan-first run executes
// at once when neither plan.md nor dawn.yaml says.
const DefaultParallel = 2

// marker holds dawn.yaml's plan_first settings: mode as written (validated
// by ParseMode), threshold and parallel (0 for the default).
type marker struct {
	mode      string
	threshold int
	parallel  int
}

func (marker) Name() string { return Name }

// Detect reports false: see Marker.
func (marker) Detect(string) (string, bool) { return "", false }

func (marker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}

// ConfigKeys names plan-first's dawn.yaml section.
func (marker) ConfigKeys() []string { return []string{ConfigKey} }

// Configure returns the marker with dawn.yaml's plan_first settings.
func (m marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	section := values[ConfigKey]
	if section == nil || yamldoc.IsNull(section) {
		return m, nil
	}
	if section.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s must be a mapping with mode, threshold and parallel, like plan_first: {mode: auto, threshold: 6, parallel: 2}", ConfigKey)
	}
	for key, val := range yamldoc.Pairs(section) {
		switch key.Value {
		case "mode":
			if _, err := ParseMode(val.Value); err != nil || val.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s.mode: plan-first mode %q is not valid; use off, auto or always", ConfigKey, val.Value)
			}
			m.mode = val.Value
		case "threshold":
			t, ok := yamldoc.Int(val)
			if !ok {
				return nil, fmt.Errorf("%s.threshold must be a whole number from 0 to 10, not %q", ConfigKey, val.Value)
			}
			if t < 0 || t > 10 {
				return nil, fmt.Errorf("%s.threshold is %d; it must be from 0 to 10", ConfigKey, t)
			}
			m.threshold = t
		case "parallel":
			n, ok := yamldoc.Int(val)
			if !ok || n < 1 || n > harness.MaxParallel {
				return nil, fmt.Errorf("%s.parallel must be a whole number from 1 to %d (steps run at once), not %q", ConfigKey, harness.MaxParallel, val.Value)
			}
			m.parallel = n
		default:
			return nil, fmt.Errorf("%s: unknown key %q; allowed keys are mode, threshold, parallel", ConfigKey, key.Value)
		}
	}
	return m, nil
}
