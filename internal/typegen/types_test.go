package typegen

import (
	"strings"
	"testing"
)

// buildTypes declares type X from schema the way Generate declares a tool
// input, and returns the summary of X and the types it needed.
func buildTypes(t *testing.T, schema string) ([]*decl, string) {
	t.Helper()
	b := &typeBuilder{names: newNamer("", false, staticNames()...), known: map[string]string{}}
	b.names.unique("Todo")
	if err := b.declareKnown("Todo", todoItemSchema(), "Todo."); err != nil {
		t.Fatal(err)
	}
	start := len(b.decls)
	if err := b.declareRoot(b.names.unique("X"), []byte(schema), "X is a test type."); err != nil {
		t.Fatal(err)
	}
	return b.decls[start:], summarize(b.decls[start:])
}

func TestSchemaToGoTypes(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{"scalars, required and optional",
			`{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"}},"required":["s","i"]}`,
			`X struct{S string "s"; I int64 "i"; N float64 "n,omitempty"; B bool "b,omitempty"}`},
		{"properties keep document order",
			`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`,
			`X struct{Zeta string "zeta,omitempty"; Alpha string "alpha,omitempty"}`},
		{"nested object, required and optional",
			`{"type":"object","properties":{"addr":{"type":"object","properties":{"street":{"type":"string"}},"required":["street"]},"billing":{"type":"object","properties":{"iban":{"type":"string"}}}},"required":["addr"]}`,
			"X struct{Addr XAddr \"addr\"; Billing *XBilling \"billing,omitempty\"}\nXAddr struct{Street string \"street\"}\nXBilling struct{Iban string \"iban,omitempty\"}"},
		{"arrays of scalars and of objects",
			`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"lines":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"integer"}}}},"raw":{"type":"array"}}}`,
			"X struct{Tags []string \"tags,omitempty\"; Lines []XLinesItem \"lines,omitempty\"; Raw []json.RawMessage \"raw,omitempty\"}\nXLinesItem struct{Qty int64 \"qty,omitempty\"}"},
		{"enum stays a string",
			`{"type":"object","properties":{"level":{"type":"string","enum":["low","high"]}},"required":["level"]}`,
			`X struct{Level string "level"}`},
		{"enum without type",
			`{"type":"object","properties":{"level":{"enum":["low","high"]}}}`,
			`X struct{Level string "level,omitempty"}`},
		{"any, unknown and mixed types",
			`{"type":"object","properties":{"a":true,"b":{},"c":{"type":["string","integer"]},"d":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			`X struct{A json.RawMessage "a,omitempty"; B json.RawMessage "b,omitempty"; C json.RawMessage "c,omitempty"; D json.RawMessage "d,omitempty"}`},
		{"nullable from jsonschema-go",
			`{"type":"object","properties":{"zip":{"type":["null","integer"]},"tags":{"type":["null","array"],"items":{"type":"string"}},"p":{"type":["null","object"],"properties":{"x":{"type":"number"}},"required":["x"]}},"required":["zip","tags","p"]}`,
			"X struct{Zip *int64 \"zip\"; Tags []string \"tags\"; P *XP \"p\"}\nXP struct{X float64 \"x\"}"},
		{"anyOf with null",
			`{"type":"object","properties":{"note":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["note"]}`,
			`X struct{Note *string "note"}`},
		{"maps",
			`{"type":"object","properties":{"counts":{"type":"object","additionalProperties":{"type":"integer"}},"meta":{"type":"object"}}}`,
			`X struct{Counts map[string]int64 "counts,omitempty"; Meta map[string]json.RawMessage "meta,omitempty"}`},
		{"open object at the root is a map alias",
			`{"type":"object"}`,
			`X = map[string]json.RawMessage`},
		{"closed empty object is an empty struct",
			`{"type":"object","additionalProperties":false}`,
			`X struct{}`},
		{"non-object root",
			`{"type":"array","items":{"type":"string"}}`,
			`X = []string`},
		{"empty schema",
			``,
			`X = json.RawMessage`},
		{"property names a json tag cannot hold make a map",
			`{"type":"object","properties":{"a,b":{"type":"string"},"":{"type":"string"}}}`,
			`X = map[string]json.RawMessage`},
		{"field names that collide",
			`{"type":"object","properties":{"a_b":{"type":"string"},"aB":{"type":"string"},"-":{"type":"string"},"2fa":{"type":"boolean"}}}`,
			`X struct{AB string "a_b,omitempty"; AB2 string "aB,omitempty"; Field string "-,omitempty"; X2fa bool "2fa,omitempty"}`},
		{"initialisms",
			`{"type":"object","properties":{"user_id":{"type":"string"},"homeUrl":{"type":"string"},"api_key":{"type":"string"}}}`,
			`X struct{UserID string "user_id,omitempty"; HomeURL string "homeUrl,omitempty"; APIKey string "api_key,omitempty"}`},
		{"the planning todo is the shared Todo",
			`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","minLength":1},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","status"],"additionalProperties":false}}},"required":["todos"]}`,
			`X struct{Todos []Todo "todos"}`},
		{"one shape used twice is one type",
			`{"type":"object","properties":{"from":{"type":"object","properties":{"x":{"type":"number"}}},"to":{"type":"object","properties":{"x":{"type":"number"}}}}}`,
			"X struct{From *XFrom \"from,omitempty\"; To *XFrom \"to,omitempty\"}\nXFrom struct{X float64 \"x,omitempty\"}"},
		{"$ref into $defs",
			`{"type":"object","properties":{"home":{"$ref":"#/$defs/addr"}},"$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}`,
			"X struct{Home *XHome \"home,omitempty\"}\nXHome struct{City string \"city,omitempty\"}"},
		{"recursive $ref stops at any",
			`{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			"X struct{Root *XRoot \"root,omitempty\"}\nXRoot struct{Kids []json.RawMessage \"kids,omitempty\"}"},
		{"dangling $ref is any",
			`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`,
			`X struct{X json.RawMessage "x,omitempty"}`},
		{"names that would clash with fixed names get a suffix",
			`{"type":"object","properties":{"message":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
			"X struct{Message *XMessage \"message,omitempty\"}\nXMessage struct{A string \"a,omitempty\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := buildTypes(t, tt.schema)
			if got != tt.want {
				t.Errorf("types\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFieldDocs(t *testing.T) {
	decls, _ := buildTypes(t, `{"type":"object","properties":{
		"level":{"type":"string","enum":["low","high"],"description":"How urgent."},
		"kind":{"const":"fixed"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`)
	want := map[string]string{
		"Level": "How urgent.\n\nOne of \"low\", \"high\".",
		"Kind":  `Always "fixed".`,
		"Tags":  `One of "a", "b".`,
	}
	for _, f := range decls[0].fields {
		if f.doc != want[f.goName] {
			t.Errorf("%s doc = %q, want %q", f.goName, f.doc, want[f.goName])
		}
	}
}

func TestSchemaToTypeScript(t *testing.T) {
	tests := []struct {
		schema string
		want   string
	}{
		{`{"type":"string","enum":["a","b"]}`, `"a" | "b"`},
		{`{"type":"array","items":{"type":"string","enum":["a","b"]}}`, `Array<"a" | "b">`},
		{`{"type":"array","items":{"type":"integer"}}`, `number[]`},
		{`{"type":["null","boolean"]}`, `boolean | null`},
		{`{"type":"object","additionalProperties":{"type":"number"}}`, `Record<string, number>`},
		{`{"enum":[1,2]}`, `1 | 2`},
		{`{"enum":[1,2.5]}`, `1 | 2.5`},
		{`{"enum":[1,"a"]}`, `unknown`},
		{`{}`, `unknown`},
	}
	for _, tt := range tests {
		decls, _ := buildTypes(t, tt.schema)
		if got := tsType(decls[0].alias); got != tt.want {
			t.Errorf("%s: TypeScript %s, want %s", tt.schema, got, tt.want)
		}
	}
}

func TestExportedName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lookupAccount", "LookupAccount"},
		{"writeTodos", "WriteTodos"},
		{"ticket_id", "TicketID"},
		{"my-route", "MyRoute"},
		{"s0", "S0"},
		{"2024", "X2024"},
		{"HTTPServer", "HTTPServer"},
		{"café", "Café"},
		{"---", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := exportedName(tt.in); got != tt.want {
			t.Errorf("exportedName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	got := wrapText("one two three four\n\n  keep   this line as it is\nfive", 9)
	want := []string{"one two", "three", "four", "", "  keep   this line as it is", "five"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapText = %q, want %q", got, want)
	}
}
