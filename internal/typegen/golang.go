package typegen

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dawn-go/dawn/router"
)

// staticGo is the part of the Go output that does not depend on the app:
// the Message and Input types, the client and the event types.
//
//go:embed static.go.txt
var staticGo string

// goImports are the packages the Go output may import, by the name it
// calls them by; it imports those its code uses.
var goImports = []struct{ name, path string }{
	{"context", "context"}, {"json", "encoding/json"}, {"url", "net/url"}, {"strings", "strings"},
	{"", ""},
	{"client", "github.com/dawn-go/dawn/client"}, {"stream", "github.com/dawn-go/dawn/stream"},
}

// staticNames returns the top-level names staticGo and staticTS declare,
// and the other fixed names of the Go output, so that no route takes one.
var staticNames = sync.OnceValue(func() []string {
	names := []string{"Routes"}
	for _, m := range tsDeclName.FindAllStringSubmatch(staticTS, -1) {
		names = append(names, m[1])
	}
	f, err := parser.ParseFile(token.NewFileSet(), "static.go", "package p\n"+staticGo, parser.SkipObjectResolution)
	if err != nil {
		panic("typegen: static.go.txt does not parse: " + err.Error())
	}
	return append(names, topLevelNames(f)...)
})

// topLevelNames returns the names f declares at the top level: types,
// constants, variables and functions (not methods), in order.
func topLevelNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			names = append(names, specNames(d.Specs)...)
		}
	}
	return names
}

// specNames returns the names of type, constant and variable specs.
func specNames(specs []ast.Spec) []string {
	var names []string
	for _, spec := range specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			names = append(names, s.Name.Name)
		case *ast.ValueSpec:
			for _, n := range s.Names {
				names = append(names, n.Name)
			}
		}
	}
	return names
}

// tsDeclName finds the names staticTS declares.
var tsDeclName = regexp.MustCompile(`(?m)^export (?:interface|type) ([A-Za-z_$][A-Za-z0-9_$]*)`)

// renderGo writes the Go package and formats it with go/format. A format
// error means typegen wrote bad Go, which is a bug.
func renderGo(m *model, pkg string) ([]byte, error) {
	var body bytes.Buffer
	writeRouteConsts(&body, m)
	body.WriteString(staticGo)
	body.WriteString("\n")
	writeConsts(&body, m)
	for _, d := range m.types.decls[:m.shared] {
		writeGoDecl(&body, d)
	}
	if m.catchAll {
		body.WriteString(escapePartsFunc)
	}
	for _, rm := range m.routes {
		body.WriteString("\n")
		writeComment(&body, "", "Route "+rm.id+".")
		writeParams(&body, rm)
		for _, d := range m.types.decls[rm.declStart:rm.declEnd] {
			writeGoDecl(&body, d)
		}
		writeRouteMethods(&body, rm)
	}

	used, err := packagesUsed(body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("typegen wrote Go that does not parse (a bug in typegen, please report it): %v", err)
	}
	var w bytes.Buffer
	w.WriteString("// " + GeneratedMarker + "\n\n")
	fmt.Fprintf(&w, "// Package %s holds types for the routes of a Dawn app, their params,\n", pkg)
	w.WriteString("// tool inputs and state, and a typed client for its run API.\n")
	w.WriteString("// Run `dawn typegen` again after changing the app.\n")
	fmt.Fprintf(&w, "package %s\n\nimport (\n", pkg)
	for _, imp := range goImports {
		switch {
		case imp.path == "":
			w.WriteString("\n")
		case used[imp.name]:
			fmt.Fprintf(&w, "\t%q\n", imp.path)
		}
	}
	w.WriteString(")\n\n")
	w.Write(body.Bytes())
	out, err := format.Source(w.Bytes())
	if err != nil {
		return nil, fmt.Errorf("typegen wrote Go that does not format (a bug in typegen, please report it): %v", err)
	}
	return out, nil
}

// packagesUsed returns the names code refers to as pkg.Name, the
// packages it needs imported.
func packagesUsed(code []byte) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "dawngen.go", append([]byte("package p\n"), code...), parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	return used, nil
}

const escapePartsFunc = `
// escapeParts escapes each part of a catch-all param with url.PathEscape
// and joins them with "/".
func escapeParts(parts []string) string {
	escaped := make([]string, len(parts))
	for i, p := range parts {
		escaped[i] = url.PathEscape(p)
	}
	return strings.Join(escaped, "/")
}
`

func writeRouteConsts(w *bytes.Buffer, m *model) {
	w.WriteString("// Route ids of the app. Pass one to Client.Wait or Client.Stream, or use\n")
	w.WriteString("// a route's Params.Path for a concrete path.\n")
	w.WriteString("const (\n")
	for _, rm := range m.routes {
		doc := fmt.Sprintf("%s is route %s", rm.constName, rm.id)
		if rm.route.Kind == router.KindSubagent {
			doc += fmt.Sprintf(", a subagent of %s", rm.route.Parent)
		}
		if rm.description != "" {
			doc += ": " + rm.description
		} else {
			doc += "."
		}
		writeComment(w, "\t", doc)
		fmt.Fprintf(w, "\t%s = %s\n", rm.constName, strconv.Quote(rm.id))
	}
	w.WriteString(")\n\n")
	w.WriteString("// Routes returns every route id of the app, sorted.\n")
	w.WriteString("func Routes() []string {\n\treturn []string{")
	for i, rm := range m.routes {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(rm.constName)
	}
	w.WriteString("}\n}\n\n")
}

// writeConsts writes the const blocks capabilities contribute.
func writeConsts(w *bytes.Buffer, m *model) {
	for _, t := range m.consts {
		writeComment(w, "", t.ConstsDoc)
		w.WriteString("const (\n")
		for _, c := range t.Consts {
			fmt.Fprintf(w, "\t%s = %q\n", c.Name, c.Value)
		}
		w.WriteString(")\n")
	}
}

// commentWidth is where comment text wraps.
const commentWidth = 76

// writeComment writes text as a // comment, wrapped at commentWidth.
func writeComment(w *bytes.Buffer, indent, text string) {
	for _, line := range wrapText(text, commentWidth-len(indent)-3) {
		if line == "" {
			w.WriteString(indent + "//\n")
			continue
		}
		w.WriteString(indent + "// " + line + "\n")
	}
}

// wrapText splits text into lines of at most width bytes, breaking at
// spaces; a word longer than width gets a line of its own. Line breaks in
// text are kept, and a line that starts with a space or tab (preformatted
// text) is never wrapped. Control characters, which Go source cannot hold
// even in a comment, become spaces.
func wrapText(text string, width int) []string {
	text = strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return -1
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || r == 0xfeff || r == utf8.RuneError:
			return ' '
		}
		return r
	}, text)
	text = strings.TrimSpace(text)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if len(line) <= width || line[0] == ' ' || line[0] == '\t' {
			out = append(out, line)
			continue
		}
		cur := ""
		for _, word := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = word
			case len(cur)+1+len(word) <= width:
				cur += " " + word
			default:
				out = append(out, cur)
				cur = word
			}
		}
		out = append(out, cur)
	}
	return out
}

func writeGoDecl(w *bytes.Buffer, d *decl) {
	w.WriteString("\n")
	writeComment(w, "", d.doc)
	if !d.object {
		fmt.Fprintf(w, "type %s = %s\n", d.name, goType(d.alias))
		return
	}
	fmt.Fprintf(w, "type %s struct {\n", d.name)
	for _, f := range d.fields {
		if f.doc != "" {
			writeComment(w, "\t", f.doc)
		}
		fmt.Fprintf(w, "\t%s %s `json:%q`\n", f.goName, goFieldType(f), jsonTag(f))
	}
	w.WriteString("}\n")
}

// goFieldType is the Go type of f: an optional or nullable struct is a
// pointer.
func goFieldType(f fieldDecl) string {
	if f.typ.kind == kindNamed && (!f.required || f.typ.nullable) {
		return "*" + goType(f.typ)
	}
	return goType(f.typ)
}

// jsonTag is the json struct tag value of f: optional fields omit empty
// values, and a property named "-" is written "-," so encoding/json does
// not skip it.
func jsonTag(f fieldDecl) string {
	switch {
	case !f.required:
		return f.json + ",omitempty"
	case f.json == "-":
		return "-,"
	}
	return f.json
}

// goType renders t; a nullable scalar is a pointer.
func goType(t typeRef) string {
	var s string
	switch t.kind {
	case kindString:
		s = "string"
	case kindInt:
		s = "int64"
	case kindNumber:
		s = "float64"
	case kindBool:
		s = "bool"
	case kindArray:
		return "[]" + goType(*t.elem)
	case kindMap:
		return "map[string]" + goType(*t.elem)
	case kindNamed:
		return t.name
	default:
		return "json.RawMessage"
	}
	if t.nullable {
		return "*" + s
	}
	return s
}

func writeParams(w *bytes.Buffer, rm *routeModel) {
	if rm.paramsType == "" {
		return
	}
	w.WriteString("\n")
	writeComment(w, "", fmt.Sprintf("%s are the params of route %s.", rm.paramsType, rm.id))
	fmt.Fprintf(w, "type %s struct {\n", rm.paramsType)
	for _, p := range rm.params {
		switch p.kind {
		case router.Dynamic:
			fmt.Fprintf(w, "\t// %s fills [%s]. It must not be empty.\n\t%s string\n", p.goName, p.name, p.goName)
		case router.CatchAll:
			fmt.Fprintf(w, "\t// %s fills [...%s]: one or more path parts.\n\t%s []string\n", p.goName, p.name, p.goName)
		default:
			fmt.Fprintf(w, "\t// %s fills [[...%s]]: zero or more path parts.\n\t%s []string\n", p.goName, p.name, p.goName)
		}
	}
	w.WriteString("}\n\n")
	writeComment(w, "", fmt.Sprintf("Path returns the concrete path of route %s for p, with each param's value in place of its segment. Values are escaped with url.PathEscape, so a value holding \"/\" stays one path part.", rm.id))
	fmt.Fprintf(w, "func (p %s) Path() string {\n", rm.paramsType)
	writePathBody(w, rm)
	w.WriteString("}\n")
}

// writePathBody writes the body of a Params.Path method: one expression
// when every part is always there, statements around an optional
// catch-all.
func writePathBody(w *bytes.Buffer, rm *routeModel) {
	var terms []string
	literal := ""
	flush := func() {
		if literal != "" {
			terms = append(terms, strconv.Quote(literal))
			literal = ""
		}
	}
	byName := map[string]paramModel{}
	for _, p := range rm.params {
		byName[p.name] = p
	}
	started := false
	for _, seg := range rm.route.Segments {
		switch seg.Kind {
		case router.Static:
			literal += "/" + seg.Value
			continue
		case router.Dynamic:
			literal += "/"
			flush()
			terms = append(terms, "url.PathEscape(p."+byName[seg.Value].goName+")")
			continue
		case router.CatchAll:
			literal += "/"
			flush()
			terms = append(terms, "escapeParts(p."+byName[seg.Value].goName+")")
			continue
		}
		// An optional catch-all.
		flush()
		if !started {
			fmt.Fprintf(w, "\tpath := %s\n", joinTerms(terms))
			started = true
		} else if len(terms) > 0 {
			fmt.Fprintf(w, "\tpath += %s\n", joinTerms(terms))
		}
		terms = nil
		name := "p." + byName[seg.Value].goName
		fmt.Fprintf(w, "\tif len(%s) > 0 {\n\t\tpath += \"/\" + escapeParts(%s)\n\t}\n", name, name)
	}
	flush()
	if !started {
		fmt.Fprintf(w, "\treturn %s\n", joinTerms(terms))
		return
	}
	if len(terms) > 0 {
		fmt.Fprintf(w, "\tpath += %s\n", joinTerms(terms))
	}
	w.WriteString("\tif path == \"\" {\n\t\treturn \"/\"\n\t}\n\treturn path\n")
}

func joinTerms(terms []string) string {
	if len(terms) == 0 {
		return `""`
	}
	return strings.Join(terms, " + ")
}

func writeRouteMethods(w *bytes.Buffer, rm *routeModel) {
	params, route, at := "", rm.constName, ""
	if rm.paramsType != "" {
		params, route, at = ", p "+rm.paramsType, "p.Path()", " at p.Path()"
	}
	w.WriteString("\n")
	writeComment(w, "", fmt.Sprintf("%s runs route %s%s on thread threadID, waits for it to finish and returns its final state.", rm.waitMethod, rm.id, at))
	fmt.Fprintf(w, "func (c *Client) %s(ctx context.Context, threadID string%s, input Input) (*%s, error) {\n", rm.waitMethod, params, rm.stateType)
	fmt.Fprintf(w, "\tvar s %s\n\tif err := c.Client.WaitState(ctx, threadID, client.Run{Route: %s, Input: input}, &s); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &s, nil\n}\n", rm.stateType, route)
	stream := "Stream" + strings.TrimPrefix(rm.waitMethod, "Wait")
	w.WriteString("\n")
	writeComment(w, "", fmt.Sprintf("%s runs route %s%s on thread threadID and returns its events as they happen.", stream, rm.id, at))
	fmt.Fprintf(w, "func (c *Client) %s(ctx context.Context, threadID string%s, input Input) (*EventStream, error) {\n", stream, params)
	fmt.Fprintf(w, "\treturn c.Client.Stream(ctx, threadID, client.Run{Route: %s, Input: input})\n}\n", route)
}
