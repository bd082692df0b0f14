package typegen

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// FuzzSchema feeds arbitrary tool input schemas to Generate. For valid JSON
// it must succeed, and the Go it writes must parse with every top-level
// name and every struct field name unique.
func FuzzSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
	f.Add([]byte(`{"type":"object","properties":{"a_b":{"type":"string"},"aB":{"type":"integer"},"AB":true}}`))
	f.Add([]byte(`{"$defs":{"n":{"type":"object","properties":{"k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`))
	f.Add([]byte(`{"type":["null","object"],"properties":{"x":{"anyOf":[{"type":"null"},{"type":"array","items":{"enum":["a\u0000b"]}}]}}}`))
	f.Add([]byte(`{"type":"object","properties":{"d":{"type":"string","description":"line one\n\u0000*/ line two"}}}`))
	f.Add([]byte(`true`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		files, err := Generate(memoryApp(schema), Options{})
		if err != nil {
			if json.Valid(schema) {
				t.Fatalf("Generate failed on valid JSON %q: %v", schema, err)
			}
			return
		}
		checkGoNames(t, files[GoFile])
	})
}

// checkGoNames parses src and fails on a repeated top-level name or a
// repeated field name in one struct.
func checkGoNames(t *testing.T, src []byte) {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), GoFile, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("generated Go does not parse: %v\n%s", err, src)
	}
	top := map[string]bool{}
	add := func(name string) {
		if top[name] {
			t.Fatalf("generated Go declares %s twice:\n%s", name, src)
		}
		top[name] = true
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					add(s.Name.Name)
					if st, ok := s.Type.(*ast.StructType); ok {
						fields := map[string]bool{}
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								if fields[n.Name] {
									t.Fatalf("struct %s has field %s twice:\n%s", s.Name.Name, n.Name, src)
								}
								fields[n.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n.Name)
					}
				}
			}
		}
	}
}
