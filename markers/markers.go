// Package markers is the registry of capability markers: the one list, in
// run order, that route preparation uses and where the runtime finds each
// capability's optional interfaces (capabilities.ConfigSection,
// RunStrategy, HTTPRoutes, ...). Adding a capability means writing its
// package and adding one line here; the runtime does not change.
package markers

import (
	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/mcptools"
	"github.com/dawn-go/dawn/memory"
	"github.com/dawn-go/dawn/planfirst"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/skills"
)

// All returns every capability marker in the fixed order markers run.
// Standing instructions and skills come first: their prompt fragments do
// not change from turn to turn, so they sit before those that do.
func All() []capabilities.Marker {
	return []capabilities.Marker{
		memory.Marker(),
		skills.Marker(),
		planning.Marker(),
		harness.Marker(),
		planfirst.Marker(),
		mcptools.Marker(),
		approval.Marker(),
	}
}
