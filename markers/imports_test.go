package markers_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/markers"
)

// The module's layers, by package path relative to the module ("" is the
// root package dawn; "x/..." is x and every package under it).
var (
	// foundation holds the data every layer shares: routes, thread state,
	// stream events, todo lists.
	foundation = []string{"router", "router/routertest", "thread", "stream", "todo", "plandiff"}
	// iface is the marker interface and what a marker contributes.
	iface = []string{"capabilities"}
	// capability holds the capabilities: each a marker that reaches the
	// runtime only through the interfaces of capabilities.
	capability = []string{"planning", "harness", "planfirst", "internal/planfirst", "approval", "internal/mcptools", "instructions", "memory", "skills", "workspace", "sandbox", "longmemory", "contextwindow", "internal/a2acall", "examples/notes"}
	// registry is the one list of built-in markers.
	registry = []string{"markers"}
	// runtime runs an app; it names no capability and is handed the app's
	// markers.
	runtime = []string{
		"internal/runner/...", "internal/agent/...", "internal/server/...", "internal/store/...", "internal/app",
		"internal/models", "internal/devserver", "internal/inspector", "internal/telemetry", "internal/routeprompt",
		"internal/planview", "internal/eval", "internal/webhook/...", "internal/crons", "internal/typegen", "internal/auth/...", "internal/ownership", "internal/runs",
	}
	// client is the public HTTP client of the run API.
	client = []string{"client"}
	// wiring builds an app's binary: flags, the registry and the app's own
	// markers, tools.
	wiring = []string{"", "cmd/dawn", "internal/cli"}
	// harnesses run an app inside a test.
	harnesses = []string{"dawntest", "internal/apptest"}
	// leaves are small helpers any layer may use.
	leaves = []string{
		"internal/yamldoc", "internal/gomod", "internal/tokens", "internal/watch", "internal/scaffold", "internal/deploy",
		"internal/pgtest", "internal/nodetool", "internal/docstext", "internal/embedtest", "internal/sandbox/...", "approval/bashrules",
	}
	// outside drive a built dawn binary or a server from outside: the
	// example app, the load tool, the end-to-end and reliability checks.
	outside = []string{"examples/app", "examples/app/dawngen", "bench", "e2e", "e2e/newcomer", "reliability"}
)

// layerRow forbids its packages to import the packages of forbidden.
type layerRow struct {
	pkgs, forbidden [][]string
	why             string
}

// layering is the import rule of every package: each row's packages may
// not import the packages of its forbidden list (tests aside).
var layering = []layerRow{
	{[][]string{foundation}, [][]string{iface, capability, registry, runtime, client, wiring, harnesses},
		"the shared data names no capability, runtime or client"},
	{[][]string{iface}, [][]string{capability, registry, runtime, client, wiring, harnesses},
		"the marker interface sits below every capability and the runtime"},
	{[][]string{capability}, [][]string{registry, runtime, client, wiring, harnesses},
		"a capability reaches the runtime only through the interfaces of capabilities"},
	{[][]string{registry}, [][]string{runtime, client, wiring, harnesses},
		"the registry is a list of markers"},
	{[][]string{runtime}, [][]string{capability, registry, wiring, harnesses},
		"the runtime names no capability and is handed the app's markers; it finds their optional interfaces by assertion"},
	{[][]string{client}, [][]string{iface, capability, registry, runtime, wiring, harnesses, leaves},
		"the client speaks the wire: it imports stream for the SSE reader and nothing of the server"},
	{[][]string{harnesses}, [][]string{capability, wiring},
		"a test harness runs the app's markers, the registry's unless told others"},
	{[][]string{leaves}, [][]string{iface, capability, registry, runtime, client, wiring, harnesses},
		"a helper knows nothing of Dawn's layers"},
	{[][]string{{"bench"}}, [][]string{{"internal/runner/...", "internal/agent/...", "internal/server/..."}, wiring},
		"the load tool drives the dawn binary over HTTP"},
	{[][]string{{"examples/app/dawngen"}}, [][]string{iface, capability, registry, runtime, wiring, harnesses, leaves},
		"generated code needs only the client and stream"},

	// Inner rows of the runtime, from the bottom up; the rows of the
	// wires are made from the packages under internal/server (wireRows).
	{[][]string{{"internal/store/dialect"}}, [][]string{{"..."}},
		"a store dialect's contract imports nothing of this module"},
	{[][]string{{"internal/store/sqlite", "internal/store/postgres"}}, [][]string{{"internal/store"}, aboveStore},
		"a database contributes its SQL, types and locking over the dialect's contract, not the store's logic"},
	{[][]string{{"internal/store/..."}, {"internal/agent/..."}}, [][]string{aboveStore},
		"the store and the agent loop sit below the runner, the runs service and every wire"},
	{[][]string{{"internal/models"}, {"internal/auth/..."}, {"internal/ownership"}}, [][]string{{"internal/store/...", "internal/agent/...", "internal/app"}, aboveStore},
		"model providers and who sends a request are decided below the store, the app and the runs"},
	{[][]string{{"internal/models"}}, [][]string{capability, {"todo"}},
		"a model knows no capability's tools or data: a capability scripts the offline model through capabilities.OfflineScripter, which the app's markers hand it"},
	{[][]string{{"internal/crons"}, {"internal/webhook/..."}}, [][]string{aboveRunner},
		"crons and webhooks keep their work in the store and are handed what starts or sends it"},
	{[][]string{{"internal/runner/..."}}, [][]string{aboveRunner},
		"the runner runs a route; the runs service and the wires sit above it"},
	{[][]string{{"internal/runs"}}, [][]string{{"internal/server/...", "internal/devserver", "internal/auth/..."}},
		"the runs service sits below every wire, and reads who calls through ownership, never auth"},
}

// aboveStore are the packages above the store and the agent loop: the
// runner, the runs service and the HTTP server; aboveRunner are those
// above the runner.
var (
	aboveStore  = []string{"internal/runner/...", "internal/runs", "internal/server/...", "internal/devserver", "internal/eval"}
	aboveRunner = []string{"internal/runs", "internal/server/...", "internal/devserver", "internal/eval"}
)

// serverCore is the HTTP core that mounts the wires; wireSeam is the
// seams it offers them; wireRegistry registers the wires with the seam,
// for the programs that serve the API to import. Every other package
// under internal/server is a wire.
const (
	serverCore   = "internal/server"
	wireSeam     = "internal/server/wire"
	wireRegistry = "internal/server/wires"
)

// wireRows are the rows of the wires: a wire imports no other wire and
// not the server core, their seam imports neither a wire nor the core,
// the core imports no wire (nor their registry: it mounts what is
// registered), and the registry imports the wires but not the core. A
// new wire gets its row by being a package under internal/server.
func wireRows(t *testing.T) []layerRow {
	t.Helper()
	var wires []string
	for _, pkg := range expand(t, []string{serverCore + "/..."}) {
		if pkg != serverCore && pkg != wireSeam && pkg != wireRegistry {
			wires = append(wires, pkg)
		}
	}
	if len(wires) < 4 {
		t.Fatalf("found the wires %v under %s; want at least LangGraph, AG-UI, MCP and OpenAI", wires, serverCore)
	}
	var rows []layerRow
	for _, w := range wires {
		others := slices.DeleteFunc(slices.Clone(wires), func(o string) bool { return o == w })
		rows = append(rows, layerRow{[][]string{{w}}, [][]string{others, {serverCore, wireRegistry}},
			"a wire translates one dialect over the runs service; it imports no other wire, not the server core and not the registry of wires"})
	}
	return append(rows,
		layerRow{[][]string{{wireSeam}}, [][]string{wires, {serverCore, wireRegistry}},
			"the wires' shared seam names no wire and not the core"},
		layerRow{[][]string{{serverCore}}, [][]string{wires, {wireRegistry}},
			"the core imports no wire: it mounts the wires registered with the seam (wire.Register)"},
		layerRow{[][]string{{wireRegistry}}, [][]string{{serverCore}},
			"the registry of wires registers them with the seam; it does not import the core"})
}

// TestLayering: no package imports what its row of the layering forbids.
func TestLayering(t *testing.T) {
	for _, row := range slices.Concat(layering, wireRows(t)) {
		forbidden := slices.Concat(row.forbidden...)
		for _, pkg := range expand(t, slices.Concat(row.pkgs...)) {
			for file, path := range imports(t, pkg) {
				if i := slices.IndexFunc(forbidden, func(p string) bool { return matches(p, path) }); i >= 0 {
					t.Errorf("%s imports %s: %s", file, displayPath(path), row.why)
				}
			}
		}
	}
}

// wireFree are the packages that speak no wire, and the outside packages
// of a wire they may not import: the runs service answers in Dawn's own
// types, never HTTP.
var wireFree = map[string][]string{
	"internal/runs": {"net/http", "github.com/labstack/echo/v4"},
}

// TestServiceSpeaksNoWire: a package of wireFree imports none of its
// forbidden outside packages.
func TestServiceSpeaksNoWire(t *testing.T) {
	for pkg, forbidden := range wireFree {
		files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(pkg), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", pkg, err)
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
				if path, _ := strconv.Unquote(imp.Path.Value); slices.Contains(forbidden, path) {
					t.Errorf("%s imports %s: %s speaks no wire; translate at the wire", file, path, pkg)
				}
			}
		}
	}
}

// TestEveryPackageHasALayer: every package of the module is in one layer,
// so a new package is placed in the table before it can be imported
// anywhere.
func TestEveryPackageHasALayer(t *testing.T) {
	layers := expand(t, slices.Concat(foundation, iface, capability, registry, runtime, client, wiring, harnesses, leaves, outside))
	for _, pkg := range modulePackages(t) {
		if n := countOf(layers, pkg); n != 1 {
			t.Errorf("package %s is in %d layers of markers/imports_test.go; put it in one", displayPath(pkg), n)
		}
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// matches reports whether import path (relative to the module) is pattern
// or, for a pattern "x/...", x or under it; the pattern "..." is every package.
func matches(pattern, path string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func displayPath(pkg string) string {
	if pkg == "" {
		return "the root package dawn"
	}
	return pkg
}

// expand turns patterns into the module's packages they name.
func expand(t *testing.T, patterns []string) []string {
	t.Helper()
	all := modulePackages(t)
	var out []string
	for _, p := range patterns {
		for _, pkg := range all {
			if matches(p, pkg) {
				out = append(out, pkg)
			}
		}
	}
	return out
}

// modulePackages lists the folders of the module (relative to its root)
// that hold Go files other than tests, testdata and tools aside.
func modulePackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != ".." && (name == "testdata" || name == "tools" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel == "." {
			rel = ""
		}
		seen[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for pkg := range seen {
		out = append(out, pkg)
	}
	slices.Sort(out)
	return out
}

// imports yields each import of the non-test Go files of pkg (relative to
// the module root) that is in this module, by file, as a path relative to
// the module ("" for the root package).
func imports(t *testing.T, pkg string) func(yield func(string, string) bool) {
	t.Helper()
	dir := filepath.Join("..", filepath.FromSlash(pkg))
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
				rel, ok := strings.CutPrefix(path, "github.com/dawn-go/dawn/")
				if path == "github.com/dawn-go/dawn" {
					rel, ok = "", true
				}
				if ok && !yield(file, rel) {
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
	if got := strings.Join(names, ","); got != "memory,skills,planning,harness,plan_first,mcp,approval,workspace,sandbox,long_term_memory,context,a2a_subagents" {
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

// TestArchitectureDoc: docs/architecture.md states the layers of this
// table, word for word, and names every package of the module in its
// package list, so the page cannot drift from the code.
func TestArchitectureDoc(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(text)
	want := map[string][]string{
		"foundation": foundation, "contracts": iface, "capabilities": capability, "registry": registry,
		"runtime": runtime, "client": client, "wiring": wiring, "harnesses": harnesses, "leaves": leaves, "outside": outside,
	}
	got := docLayers(doc)
	for name, pkgs := range want {
		if !slices.Equal(sorted(got[name]), sorted(pkgs)) {
			t.Errorf("docs/architecture.md layer %q lists %v; markers/imports_test.go has %v", name, got[name], pkgs)
		}
	}
	for name := range got {
		if want[name] == nil {
			t.Errorf("docs/architecture.md has a layer %q that markers/imports_test.go does not", name)
		}
	}
	_, list, _ := strings.Cut(doc, "\n## Packages\n")
	for _, pkg := range modulePackages(t) {
		if pkg != "" && !strings.Contains(list, "`"+pkg+"/`") && !strings.Contains(list, "`"+pkg+"`") {
			t.Errorf("docs/architecture.md's package list does not name %s; add a line saying what it owns", pkg)
		}
	}
}

// docLayers reads the "| layer | packages |" table: each row's layer and
// the package patterns in backquotes ("dawn" is the module root).
func docLayers(doc string) map[string][]string {
	out := map[string][]string{}
	_, table, ok := strings.Cut(doc, "| layer | packages |\n|---|---|\n")
	if !ok {
		return out
	}
	for line := range strings.Lines(table) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 4 {
			break
		}
		var pkgs []string
		parts := strings.Split(cells[2], "`")
		for i := 1; i < len(parts); i += 2 {
			if parts[i] == "dawn" {
				parts[i] = ""
			}
			pkgs = append(pkgs, parts[i])
		}
		out[strings.TrimSpace(cells[1])] = pkgs
	}
	return out
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
