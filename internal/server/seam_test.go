package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/server/a2a"
	"github.com/dawn-go/dawn/internal/server/agui"
	"github.com/dawn-go/dawn/internal/server/mcp"
	"github.com/dawn-go/dawn/internal/server/openai"
	"github.com/dawn-go/dawn/internal/server/wire"
)

// TestHostChecksEveryRead: every method of the wires' Host that takes a
// request's context is the core host's own (host.go, assistants.go) or
// the runs service's (internal/runs, which checks the owner), never one
// promoted from a store, which would read any user's threads. A method
// added to wire.Host must be written on the service or the host, with
// the owner check.
func TestHostChecksEveryRead(t *testing.T) {
	fset := token.NewFileSet()
	wireFile, err := parser.ParseFile(fset, filepath.Join("wire", "host.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := methodsOf(t, fset, ".", "host")
	for name := range methodsOf(t, fset, filepath.Join("..", "runs"), "Service") {
		declared[name] = true
	}
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
					t.Errorf("wire.%s.%s takes a request's context but neither the host nor the runs service declares it: write it on *runs.Service (or *host) with the owner check", ts.Name.Name, name)
				}
			}
		}
	}
}

// methodsOf are the names of the methods declared on *typ in the non-test
// files of the package in dir.
func methodsOf(t *testing.T, fset *token.FileSet, dir, typ string) map[string]bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
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
				if id, ok := star.X.(*ast.Ident); ok && id.Name == typ {
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

// TestSeamsAreNarrow: every seam between the core and a wire has at most
// 20 methods, and a wire that starts runs without managing them (AG-UI,
// OpenAI, MCP) takes at most 7. A2A, which also follows, cancels and
// reads back its runs, takes a Host of its own under 20.
func TestSeamsAreNarrow(t *testing.T) {
	seams := []struct {
		name  string
		typ   reflect.Type
		limit int
	}{
		{"wire.Mux", reflect.TypeFor[wire.Mux](), 20},
		{"wire.RunControl", reflect.TypeFor[wire.RunControl](), 20},
		{"wire.Threads", reflect.TypeFor[wire.Threads](), 20},
		{"wire.Crons", reflect.TypeFor[wire.Crons](), 20},
		{"wire.Items", reflect.TypeFor[wire.Items](), 20},
		{"wire.Assistants", reflect.TypeFor[wire.Assistants](), 20},
		{"wire.Settings", reflect.TypeFor[wire.Settings](), 20},
		{"agui.Host", reflect.TypeFor[agui.Host](), 7},
		{"openai.Host", reflect.TypeFor[openai.Host](), 7},
		{"mcp.Host", reflect.TypeFor[mcp.Host](), 7},
		{"a2a.Host", reflect.TypeFor[a2a.Host](), 20},
	}
	for _, s := range seams {
		if n := s.typ.NumMethod(); n > s.limit {
			t.Errorf("%s has %d methods, more than %d: split it by what its consumers need", s.name, n, s.limit)
		}
	}
	// wire.Host is a set of those seams, not an interface of its own.
	if k := reflect.TypeFor[wire.Host]().Kind(); k != reflect.Struct {
		t.Errorf("wire.Host is a %s; keep it a struct of narrow seams", k)
	}
}
