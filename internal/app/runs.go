package app

import (
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Runs is dawn.yaml's runs: section: what happens to runs beyond one
// request.
type Runs struct {
	// ContinueOrphans lets a live server continue, from its last committed
	// step, a run whose server is gone (by the store's lease rules),
	// instead of marking it interrupted. Tool calls that had started are
	// recorded before they run, so that a continuation does not run them
	// blindly again.
	ContinueOrphans bool
}

// runsSection is the dawn.yaml section of the run settings.
const runsSection = "runs"

// runs reads the runs: section: {continue_orphans: true}.
func (p *configParser) runs(section *yaml.Node) Runs {
	var r Runs
	if yamldoc.IsNull(section) {
		return r
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping, like %s: {continue_orphans: true}", runsSection, runsSection)
		return r
	}
	for key, val := range yamldoc.Pairs(section) {
		full := runsSection + "." + key.Value
		switch key.Value {
		case "continue_orphans":
			if val.Kind != yaml.ScalarNode || val.Decode(&r.ContinueOrphans) != nil {
				p.fail(key.Line, "%s must be true or false, not %q", full, val.Value)
			}
		default:
			p.fail(key.Line, "field %s not found; allowed keys in %s: continue_orphans", full, runsSection)
		}
	}
	return r
}
