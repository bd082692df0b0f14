package capabilities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStateFile(t *testing.T) {
	const path = "app/support/state.yaml"
	type want struct {
		name, typ, def string
		reducer        Reducer
	}
	tests := []struct {
		name    string
		src     string
		want    []want
		wantErr string
	}{
		{"empty file", "", nil, ""},
		{"comments only", "# no fields yet\n", nil, ""},
		{
			"every type",
			"s:\n  type: string\nn:\n  type: number\ni:\n  type: integer\nb:\n  type: boolean\na:\n  type: array\no:\n  type: object\n",
			[]want{{"s", "string", "", Replace}, {"n", "number", "", Replace}, {"i", "integer", "", Replace}, {"b", "boolean", "", Replace}, {"a", "array", "", Append}, {"o", "object", "", Replace}},
			"",
		},
		{
			"defaults",
			"tier:\n  type: string\n  default: free\nlimit:\n  type: integer\n  default: 3\nratio:\n  type: number\n  default: 0.5\non:\n  type: boolean\n  default: true\ntags:\n  type: array\n  default: [a, b]\nmeta:\n  type: object\n  default: {k: v}\n",
			[]want{{"tier", "string", `"free"`, Replace}, {"limit", "integer", `3`, Replace}, {"ratio", "number", `0.5`, Replace}, {"on", "boolean", `true`, Replace}, {"tags", "array", `["a","b"]`, Append}, {"meta", "object", `{"k":"v"}`, Replace}},
			"",
		},
		{"integer default for number", "n:\n  type: number\n  default: 2\n", []want{{"n", "number", `2`, Replace}}, ""},
		{"array with replace", "tags:\n  type: array\n  reducer: replace\n", []want{{"tags", "array", "", Replace}}, ""},
		{"array with append", "tags:\n  type: array\n  reducer: append\n", []want{{"tags", "array", "", Append}}, ""},
		{"description", "tier:\n  type: string\n  description: the plan tier\n", []want{{"tier", "string", "", Replace}}, ""},
		{"default type mismatch", "limit:\n  type: integer\n  default: lots\n", nil, `app/support/state.yaml:1: field "limit": default "lots" is not of type integer`},
		{"fraction for integer", "limit:\n  type: integer\n  default: 1.5\n", nil, `app/support/state.yaml:1: field "limit": default 1.5 is not of type integer`},
		{"string default for array", "tags:\n  type: array\n  default: a\n", nil, `app/support/state.yaml:1: field "tags": default "a" is not of type array`},
		{"append on non-array", "tier:\n  type: string\n  reducer: append\n", nil, `app/support/state.yaml:1: field "tier": reducer append needs type array, not string`},
		{"unknown reducer", "tags:\n  type: array\n  reducer: merge\n", nil, `app/support/state.yaml:1: field "tags": reducer "merge" must be replace or append`},
		{"unknown key", "tier:\n  type: string\n  defualt: free\n", nil, `app/support/state.yaml:1: field "tier": unknown key "defualt"; allowed keys are type, default, reducer, description`},
		{"unknown type", "tier:\n  type: text\n", nil, `app/support/state.yaml:1: field "tier": type "text" must be one of string, number, integer, boolean, array, object`},
		{"missing type", "tier:\n  default: free\n", nil, `app/support/state.yaml:1: field "tier": type "" must be one of string, number, integer, boolean, array, object`},
		{"bad name", "my-field:\n  type: string\n", nil, `app/support/state.yaml:1: field "my-field": a field name must be a letter or _ followed by letters, digits or _`},
		{"name starts with digit", "1st:\n  type: string\n", nil, `app/support/state.yaml:1: field "1st": a field name must be a letter or _ followed by letters, digits or _`},
		{"reserved messages", "messages:\n  type: array\n", nil, `app/support/state.yaml:1: field "messages": "messages" is kept by the runtime; choose another name`},
		{"duplicate", "tier:\n  type: string\ntier:\n  type: string\n", nil, `app/support/state.yaml:3: field "tier" is declared twice`},
		{"field not a mapping", "tier: string\n", nil, `app/support/state.yaml:1: field "tier": expected {type, default, reducer}`},
		{"root not a mapping", "- tier\n", nil, `app/support/state.yaml:1: expected a mapping of field names to {type, default, reducer}`},
		{"not YAML", "tier: [\n", nil, `app/support/state.yaml: not valid YAML: yaml: line 1: did not find expected node content`},
		{
			"every bad field reported",
			"ok:\n  type: string\nbad-name:\n  type: string\nworse:\n  type: nope\n",
			nil,
			"app/support/state.yaml:3: field \"bad-name\": a field name must be a letter or _ followed by letters, digits or _\napp/support/state.yaml:5: field \"worse\": type \"nope\" must be one of string, number, integer, boolean, array, object",
		},
		{"too big", "# " + strings.Repeat("x", maxStateFile) + "\n", nil, `app/support/state.yaml: file is 262147 bytes, over the 262144 byte limit; declare fewer fields`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := ParseStateFile(path, []byte(tt.src))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(fields) != len(tt.want) {
				t.Fatalf("got %d fields %+v, want %d", len(fields), fields, len(tt.want))
			}
			for i, w := range tt.want {
				f := fields[i]
				if f.Name != w.name || f.Type != w.typ || string(f.Default) != w.def || f.Reducer != w.reducer || f.Source != path || f.Capability != "" {
					t.Errorf("field %d = %+v (default %s), want %+v", i, f, f.Default, w)
				}
				if !strings.Contains(string(f.Schema), `"type":"`+w.typ+`"`) {
					t.Errorf("field %d schema = %s", i, f.Schema)
				}
			}
		})
	}
}

func TestParseStateFileDescriptionInSchema(t *testing.T) {
	fields, err := ParseStateFile("state.yaml", []byte("tier:\n  type: string\n  description: the plan tier\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"description":"the plan tier","type":"string"}`; string(fields[0].Schema) != want {
		t.Errorf("schema = %s, want %s", fields[0].Schema, want)
	}
}

func TestLoadStateFile(t *testing.T) {
	dir := t.TempDir()
	fields, err := LoadStateFile(dir)
	if err != nil || fields != nil {
		t.Fatalf("missing file: fields %v, error %v; want none", fields, err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFileName), []byte("tier:\n  type: string\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fields, err = LoadStateFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 1 || fields[0].Source != filepath.Join(dir, StateFileName) {
		t.Errorf("fields = %+v", fields)
	}
}

func FuzzParseStateFile(f *testing.F) {
	f.Add([]byte("tier:\n  type: string\n  default: free\nnotes:\n  type: array\n"))
	f.Add([]byte("x: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := ParseStateFile("state.yaml", data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, fd := range fields {
			if !fieldName.MatchString(fd.Name) || fd.Name == "messages" || seen[fd.Name] {
				t.Errorf("accepted field name %q", fd.Name)
			}
			seen[fd.Name] = true
			if fd.Reducer == Append && fd.Type != "array" {
				t.Errorf("field %q: append on type %s", fd.Name, fd.Type)
			}
			if fd.Default != nil && !jsonHasType(fd.Default, fd.Type) {
				t.Errorf("field %q: default %s is not %s", fd.Name, fd.Default, fd.Type)
			}
		}
	})
}
