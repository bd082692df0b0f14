package markers_test

import (
	"go/parser"
	"go/token"
	"iter"
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
var capabilityPackages = []string{"planning", "harness", "planfirst", "internal/mcptools", "approval", "memory", "skills"}

// runtimePackages name no capability: they find capabilities through the
// optional interfaces of the registered markers: the runner runs their
// RunStrategy and lends them its RunHost and ThreadHost, the server mounts
// their HTTPRoutes.
var runtimePackages = []string{
	"internal/runner", "internal/server", "internal/app", "internal/models", "typegen", "internal/agent",
	"internal/store", "thread", "stream", "router", "internal/cli", "dawntest", "internal/inspector",
	"internal/planview", "internal/devserver", "internal/client", "internal/telemetry", "internal/routeprompt",
}

// TestRuntimeNamesNoCapability: no runtime package's Go files (tests
// aside) import a capability package.
func TestRuntimeNamesNoCapability(t *testing.T) {
	for _, pkg := range runtimePackages {
		for file, path := range imports(t, pkg) {
			if slices.Contains(capabilityPackages, path) {
				t.Errorf("%s imports %s; reach the capability through an optional interface of capabilities instead", file, path)
			}
		}
	}
}

// TestCapabilitiesNameNoRuntime: capability packages (tests aside) import
// neither the runtime nor the registry, only capabilities and what is
// below it, so the runtime can find them without a cycle.
func TestCapabilitiesNameNoRuntime(t *testing.T) {
	forbidden := append([]string{"markers"}, runtimePackages...)
	for _, data := range []string{"thread", "stream", "router"} {
		forbidden = slices.DeleteFunc(forbidden, func(p string) bool { return p == data })
	}
	for _, pkg := range append(capabilityPackages, "examples/notes") {
		for file, path := range imports(t, pkg) {
			if slices.Contains(forbidden, path) {
				t.Errorf("%s imports %s; a capability reaches the runtime only through the interfaces of capabilities", file, path)
			}
		}
	}
}

// imports yields each import of the non-test Go files of pkg (relative to
// the repository root) that is in this module, by file, as a path relative
// to the module.
func imports(t *testing.T, pkg string) iter.Seq2[string, string] {
	t.Helper()
	dir := filepath.Join("..", pkg)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	return func(yield func(string, string) bool) {
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
				if rel, ok := strings.CutPrefix(path, "github.com/dawn-go/dawn/"); ok && !yield(file, rel) {
					return
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
	if got := strings.Join(names, ","); got != "memory,skills,planning,harness,plan_first,mcp,approval" {
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
