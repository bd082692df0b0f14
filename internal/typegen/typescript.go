package typegen

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/router"
)

// staticTS is the part of the TypeScript output that does not depend on the
// app: messages, the run request and the stream event types.
//
//go:embed static.d.ts.txt
var staticTS string

// renderTS writes dawn.generated.d.ts: declarations only, in the same order
// and with the same names as the Go output.
func renderTS(m *model) []byte {
	var w bytes.Buffer
	w.WriteString("// " + GeneratedMarker + "\n//\n")
	w.WriteString("// Types for the routes of a Dawn app: route ids, params, tool inputs, state\n")
	w.WriteString("// and stream events. Run `dawn typegen` again after changing the app.\n\n")

	w.WriteString("/** Route ids of the app. */\nexport type RouteId =")
	if len(m.routes) == 0 {
		w.WriteString(" never;\n\n")
	} else {
		for _, rm := range m.routes {
			w.WriteString("\n  | " + tsString(rm.id))
		}
		w.WriteString(";\n\n")
	}
	w.WriteString(staticTS)
	for _, d := range m.types.decls[:m.shared] {
		writeTSDecl(&w, d)
	}
	for _, rm := range m.routes {
		w.WriteString("\n")
		for _, line := range wrapText("Route "+rm.id, commentWidth) {
			w.WriteString("// " + line + "\n")
		}
		writeTSParams(&w, rm)
		var state *decl
		for _, d := range m.types.decls[rm.declStart:rm.declEnd] {
			writeTSDecl(&w, d)
			if d.name == rm.stateType {
				state = d
			}
		}
		writeTSTools(&w, rm)
		writeTSInput(&w, rm, state)
	}

	w.WriteString("\n/** Every route by id: its params, tools, state and run input. */\nexport interface RouteMap {")
	if len(m.routes) > 0 {
		w.WriteString("\n")
	}
	for _, rm := range m.routes {
		params := "Record<string, never>"
		if rm.paramsType != "" {
			params = rm.paramsType
		}
		fmt.Fprintf(&w, "  %s: {\n    params: %s;\n    tools: %s;\n    state: %s;\n    input: %s;\n  };\n", tsString(rm.id), params, rm.toolsType, rm.stateType, rm.inputType)
	}
	w.WriteString("}\n")
	return w.Bytes()
}

// writeJSDoc writes text as a /** */ comment.
func writeJSDoc(w *bytes.Buffer, indent, text string) {
	lines := wrapText(strings.ReplaceAll(text, "*/", "*\\/"), commentWidth-len(indent)-3)
	if len(lines) == 1 && lines[0] == "" {
		return
	}
	if len(lines) == 1 {
		w.WriteString(indent + "/** " + lines[0] + " */\n")
		return
	}
	w.WriteString(indent + "/**\n")
	for _, line := range lines {
		if line == "" {
			w.WriteString(indent + " *\n")
			continue
		}
		w.WriteString(indent + " * " + line + "\n")
	}
	w.WriteString(indent + " */\n")
}

func writeTSDecl(w *bytes.Buffer, d *decl) {
	w.WriteString("\n")
	writeJSDoc(w, "", d.doc)
	if !d.object {
		fmt.Fprintf(w, "export type %s = %s;\n", d.name, tsType(d.alias))
		return
	}
	writeTSInterface(w, d.name, d.fields)
}

func writeTSInterface(w *bytes.Buffer, name string, fields []fieldDecl) {
	if len(fields) == 0 {
		fmt.Fprintf(w, "export type %s = Record<string, never>;\n", name)
		return
	}
	fmt.Fprintf(w, "export interface %s {\n", name)
	for _, f := range fields {
		writeJSDoc(w, "  ", f.doc)
		optional := ""
		if !f.required {
			optional = "?"
		}
		fmt.Fprintf(w, "  %s%s: %s;\n", tsKey(f.json), optional, tsType(f.typ))
	}
	w.WriteString("}\n")
}

// tsType renders t.
func tsType(t typeRef) string {
	var s string
	switch t.kind {
	case kindString, kindInt, kindNumber, kindBool:
		if len(t.enum) > 0 {
			values := make([]string, len(t.enum))
			for i, v := range t.enum {
				values[i] = string(v)
			}
			s = strings.Join(values, " | ")
			break
		}
		s = map[kind]string{kindString: "string", kindInt: "number", kindNumber: "number", kindBool: "boolean"}[t.kind]
	case kindArray:
		elem := tsType(*t.elem)
		if strings.Contains(elem, " ") {
			s = "Array<" + elem + ">"
		} else {
			s = elem + "[]"
		}
	case kindMap:
		s = "Record<string, " + tsType(*t.elem) + ">"
	case kindNamed:
		s = t.name
	default:
		return "unknown"
	}
	if t.nullable {
		return s + " | null"
	}
	return s
}

// tsKey is a property name, quoted unless it is a plain identifier.
func tsKey(name string) string {
	if isTSIdentifier(name) {
		return name
	}
	return tsString(name)
}

// tsString is s as a TypeScript string literal.
func tsString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

func writeTSParams(w *bytes.Buffer, rm *routeModel) {
	if rm.paramsType == "" {
		return
	}
	w.WriteString("\n")
	writeJSDoc(w, "", fmt.Sprintf("The params of route %s.", rm.id))
	fmt.Fprintf(w, "export interface %s {\n", rm.paramsType)
	for _, p := range rm.params {
		switch p.kind {
		case router.Dynamic:
			fmt.Fprintf(w, "  %s: string;\n", p.name)
		case router.CatchAll:
			fmt.Fprintf(w, "  %s: string[];\n", p.name)
		default:
			fmt.Fprintf(w, "  %s?: string[];\n", p.name)
		}
	}
	w.WriteString("}\n")
}

func writeTSTools(w *bytes.Buffer, rm *routeModel) {
	w.WriteString("\n")
	writeJSDoc(w, "", fmt.Sprintf("The tools of route %s: each tool's input, by tool name.", rm.id))
	if len(rm.tools) == 0 {
		fmt.Fprintf(w, "export type %s = Record<string, never>;\n", rm.toolsType)
		return
	}
	fmt.Fprintf(w, "export interface %s {\n", rm.toolsType)
	for _, t := range rm.tools {
		fmt.Fprintf(w, "  %s: %s;\n", tsKey(t.name), t.inputType)
	}
	w.WriteString("}\n")
}

// writeTSInput writes the run input of the route: messages and the state
// fields a run's input may set (those declared in state.yaml).
func writeTSInput(w *bytes.Buffer, rm *routeModel, state *decl) {
	fields := []fieldDecl{{json: "messages", required: false, typ: typeRef{kind: kindArray, elem: &typeRef{kind: kindNamed, name: "InputMessage"}}}}
	settable := map[string]bool{}
	for _, f := range rm.fields {
		if f.Capability == "" {
			settable[f.Name] = true
		}
	}
	if state != nil {
		for _, f := range state.fields {
			if settable[f.json] {
				fields = append(fields, f)
			}
		}
	}
	w.WriteString("\n")
	writeJSDoc(w, "", fmt.Sprintf("The input of a run on route %s: new messages, and values for the state fields declared in state.yaml.", rm.id))
	writeTSInterface(w, rm.inputType, fields)
}
