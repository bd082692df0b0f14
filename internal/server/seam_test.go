package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostChecksEveryRead: every method of the wires' Host that takes a
// request's context is the core host's own (internal/server/owners.go
// and host.go), not one promoted from the store it embeds, which would
// read any user's threads. A method added to wire.Host must be written
// on the host, with the owner check.
func TestHostChecksEveryRead(t *testing.T) {
	fset := token.NewFileSet()
	wireFile, err := parser.ParseFile(fset, filepath.Join("wire", "host.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := hostMethods(t, fset)
	for _, d := range wireFile.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				continue
			}
			for _, m := range it.Methods.List {
				fn, ok := m.Type.(*ast.FuncType)
				if !ok || len(m.Names) == 0 || !takesContext(fn) {
					continue
				}
				if name := m.Names[0].Name; !declared[name] {
					t.Errorf("wire.%s.%s takes a request's context but the host does not declare it: write it on *host with the owner check (see owners.go)", ts.Name.Name, name)
				}
			}
		}
	}
}

// hostMethods are the names of the methods declared on *host in the
// package's non-test files.
func hostMethods(t *testing.T, fset *token.FileSet) map[string]bool {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "host" {
					out[fd.Name.Name] = true
				}
			}
		}
	}
	return out
}

// takesContext reports whether fn's first parameter is a context.Context.
func takesContext(fn *ast.FuncType) bool {
	if fn.Params == nil || len(fn.Params.List) == 0 {
		return false
	}
	sel, ok := fn.Params.List[0].Type.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Context"
}
