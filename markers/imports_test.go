package markers_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/markers"
)

// capabilityPackages are the packages that implement capabilities; the
// runtime reaches them only through this registry.
var capabilityPackages = []string{"planning", "harness", "planfirst", "approval"}

// runtimePackages name no capability: they find capabilities through the
// optional interfaces of the registered markers. runner and server join the
// list once they call the markers' RunStrategy and HTTPRoutes instead of
// runner/planfirst.go and server/plan.go.
var runtimePackages = []string{"app", "models", "typegen", "agent", "store", "thread", "stream", "router", "cli", "dawntest", "inspector", "planview"}

// TestRuntimeNamesNoCapability: no runtime package's Go files (tests
// aside) import a capability package.
func TestRuntimeNamesNoCapability(t *testing.T) {
	for _, pkg := range runtimePackages {
		dir := filepath.Join("..", pkg)
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, c := range capabilityPackages {
					if path == "github.com/dawn-go/dawn/"+c {
						t.Errorf("%s imports %s; reach the capability through an optional interface of capabilities instead", file, path)
					}
				}
			}
		}
	}
}

// TestRegistry: every capability package has its marker registered once,
// in run order, with distinct names.
func TestRegistry(t *testing.T) {
	var names []string
	for _, m := range markers.All() {
		if slices.Contains(names, m.Name()) {
			t.Errorf("marker %q is registered twice", m.Name())
		}
		names = append(names, m.Name())
	}
	if got := strings.Join(names, ","); got != "planning,harness,plan_first,approval" {
		t.Errorf("markers = %s", got)
	}
	var claimed []string
	for _, m := range markers.All() {
		if cs, ok := m.(capabilities.ConfigSection); ok {
			for _, k := range cs.ConfigKeys() {
				if slices.Contains(claimed, k) {
					t.Errorf("dawn.yaml key %q is claimed twice", k)
				}
				claimed = append(claimed, k)
			}
		}
	}
}
