package markers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// storePkg is the store's import path; wholeStore is the composition of
// its parts (store.Threads, store.Runs, ...) that consumers do not take.
const (
	storePkg   = "github.com/dawn-go/dawn/internal/store"
	wholeStore = "Store"
)

// wholeStoreHolders are the production packages but the store itself
// that name store.Store, each with its reason; every other package takes
// the store's parts.
var wholeStoreHolders = map[string]string{
	"internal/cli":     "opens the store the server runs on",
	"internal/apptest": "opens the store a test app runs on",
	"internal/runner":  "is handed the store it opens runs on, and hands it on (Manager.Store)",
	"internal/server":  "the HTTP core, yet to take the parts it uses",
}

// TestWholeStoreHolders: no production package but wholeStoreHolders
// names store.Store, and each of them still does (a package that took the
// store's parts leaves the list), so that a new consumer takes the parts
// it uses rather than the whole store.
func TestWholeStoreHolders(t *testing.T) {
	holders := map[string]string{} // package → a file that names it
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if pkg != "internal/store" && namesWholeStore(f) {
			holders[pkg] = filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, file := range holders {
		if _, ok := wholeStoreHolders[pkg]; !ok {
			t.Errorf("%s takes the whole store.Store; take the parts it uses (store.Threads, store.Runs, ...), or add %s with its reason to markers/seams_test.go", file, pkg)
		}
	}
	for pkg := range wholeStoreHolders {
		if holders[pkg] == "" {
			t.Errorf("%s no longer names store.Store; remove it from markers/seams_test.go", pkg)
		}
	}
}

// namesWholeStore reports whether f's code (not its comments) names
// store.Store.
func namesWholeStore(f *ast.File) bool {
	local := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == storePkg {
			local = "store"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == wholeStore {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				found = true
			}
		}
		return !found
	})
	return found
}
