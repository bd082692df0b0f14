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
	for _, name := range topLevelNames(file) {
		if top[name] {
			t.Fatalf("generated Go declares %s twice:\n%s", name, src)
		}
		top[name] = true
	}
	for _, d := range file.Decls {
		if gd, ok := d.(*ast.GenDecl); ok {
			for _, spec := range gd.Specs {
				checkFieldNames(t, spec, src)
			}
		}
	}
}

// checkFieldNames fails when spec declares a struct with a field name
// twice.
func checkFieldNames(t *testing.T, spec ast.Spec, src []byte) {
	t.Helper()
	ts, ok := spec.(*ast.TypeSpec)
	if !ok {
		return
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return
	}
	fields := map[string]bool{}
	for _, fld := range st.Fields.List {
		for _, n := range fld.Names {
			if fields[n.Name] {
				t.Fatalf("struct %s has field %s twice:\n%s", ts.Name.Name, n.Name, src)
			}
			fields[n.Name] = true
		}
	}
}
