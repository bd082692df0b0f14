// Package markers is the registry of the built-in capability markers: the
// one list, in run order, that the CLI and the test harnesses hand to the
// runtime, which finds each capability's optional interfaces
// (capabilities.ConfigSection, RunStrategy, HTTPRoutes, ...) by assertion.
// A built-in capability is its package plus one line here; an app adds its
// own with dawn.WithCapability. Which package may import which is the
// layering table in imports_test.go.
package markers

import (
	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/contextwindow"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/instructions"
	"github.com/dawn-go/dawn/internal/a2acall"
	"github.com/dawn-go/dawn/internal/mcptools"
	"github.com/dawn-go/dawn/longmemory"
	"github.com/dawn-go/dawn/planfirst"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/sandbox"
	"github.com/dawn-go/dawn/skills"
	"github.com/dawn-go/dawn/workspace"
)

// All returns every capability marker in the fixed order markers run.
// Standing instructions and skills come first: their prompt fragments do
// not change from turn to turn, so they sit before those that do.
func All() []capabilities.Marker {
	return []capabilities.Marker{
		instructions.Marker(),
		skills.Marker(),
		planning.Marker(),
		harness.Marker(),
		planfirst.Marker(),
		mcptools.Marker(),
		approval.Marker(),
		workspace.Marker(),
		sandbox.Marker(),
		longmemory.Marker(),
		contextwindow.Marker(),
		a2acall.Marker(),
	}
}
