package markers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Bounds on the size of production code: a file above maxFileLines lines
// or an interface above maxInterfaceMethods methods (counting those it
// embeds) is split, or named here with the reason it stays whole.
const (
	maxFileLines        = 800
	maxInterfaceMethods = 20
)

// wideFiles are the production files allowed above maxFileLines, each
// with its reason. Generated files are not counted. None today.
var wideFiles = map[string]string{}

// wideInterfaces are the production interfaces ("pkg/path.Name") allowed
// above maxInterfaceMethods, each with its reason.
var wideInterfaces = map[string]string{
	// The composition of the store's parts, each at most 20 methods and
	// named for what it holds (store.Threads, Runs, Queue, History,
	// ToolOutputs, AppValues, AuditLog, Crons, Items, Assistants, Webhooks,
	// Admin). Only who opens the store holds it whole (internal/cli,
	// internal/apptest), the runner, which hands it on (Manager.Store),
	// and the HTTP core (internal/server), which is yet to take the parts
	// it uses; every other consumer takes its parts.
	"internal/store.Store": "the composition of the store's parts, held whole only where the store is opened and handed on",
	// A database's statements, one method each, that the store's logic
	// (written once over this contract) runs, in parts of at most 20
	// methods by what each reads or writes (dialect.ThreadReader,
	// RunReader, ..., ThreadTx, RunTx, HistoryTx, ...). The compositions
	// stay whole: a dialect implements each over one connection or one
	// transaction, and one write spans several parts (a run's end writes
	// its run, events, checkpoint and webhook in one commit), so
	// Database.Write hands the whole transaction and the store's helpers
	// take the part they use.
	"internal/store/dialect.Reader":   "the composition of the read parts, one method per read statement",
	"internal/store/dialect.Tx":       "the composition of the write parts, one transaction across them",
	"internal/store/dialect.Database": "Reader, and the write transaction and stats around it",
}

// TestSizeBounds: no production file above maxFileLines lines and no
// interface above maxInterfaceMethods methods beyond the allowlists, and
// every allowlisted one is still above its bound (a split one leaves the
// list).
func TestSizeBounds(t *testing.T) {
	files, ifaces := measureModule(t)
	check := func(kind string, got map[string]int, bound int, allowed map[string]string) {
		for name, n := range got {
			if _, ok := allowed[name]; n > bound && !ok {
				t.Errorf("%s %s has %d, above the bound of %d; split it, or add it with its reason to markers/size_test.go", kind, name, n, bound)
			}
		}
		for name := range allowed {
			if got[name] <= bound {
				t.Errorf("%s %s is allowed above %d but has %d; remove it from markers/size_test.go", kind, name, bound, got[name])
			}
		}
	}
	check("file", files, maxFileLines, wideFiles)
	check("interface", ifaces, maxInterfaceMethods, wideInterfaces)
}

// ifaceDecl is one interface type: its own methods and what it embeds,
// as keys "pkg/path.Name" of this module (others are not followed).
type ifaceDecl struct {
	methods int
	embeds  []string
}

// measureModule returns the line count of each production Go file of
// the module (generated ones aside), by path relative to the module, and
// the method count of each of its interfaces, by "pkg/path.Name".
func measureModule(t *testing.T) (files map[string]int, ifaces map[string]int) {
	t.Helper()
	files = map[string]int{}
	decls := map[string]ifaceDecl{}
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
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel("..", path)
		files[filepath.ToSlash(rel)] = strings.Count(string(src), "\n")
		collectInterfaces(f, filepath.ToSlash(filepath.Dir(rel)), decls)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ifaces = map[string]int{}
	for key := range decls {
		ifaces[key] = methodCount(key, decls, map[string]bool{})
	}
	return files, ifaces
}

// collectInterfaces adds the interface types f declares to decls; pkg is
// f's package folder relative to the module.
func collectInterfaces(f *ast.File, pkg string, decls map[string]ifaceDecl) {
	imports := map[string]string{} // local name → folder in this module
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		dir, ok := strings.CutPrefix(path, "github.com/dawn-go/dawn/")
		if !ok {
			continue
		}
		local := filepath.Base(dir)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		imports[local] = dir
	}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		it, ok := spec.Type.(*ast.InterfaceType)
		if !ok {
			return true
		}
		var d ifaceDecl
		for _, field := range it.Methods.List {
			if len(field.Names) > 0 {
				d.methods += len(field.Names)
				continue
			}
			switch e := field.Type.(type) {
			case *ast.Ident:
				d.embeds = append(d.embeds, pkg+"."+e.Name)
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
					d.embeds = append(d.embeds, imports[x.Name]+"."+e.Sel.Name)
				}
			}
		}
		decls[pkg+"."+spec.Name.Name] = d
		return true
	})
}

// methodCount is the methods of interface key with those it embeds.
func methodCount(key string, decls map[string]ifaceDecl, seen map[string]bool) int {
	d, ok := decls[key]
	if !ok || seen[key] {
		return 0
	}
	seen[key] = true
	n := d.methods
	for _, e := range d.embeds {
		n += methodCount(e, decls, seen)
	}
	return n
}
