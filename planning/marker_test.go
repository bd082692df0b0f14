package planning

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
)

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMarkerDetect(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string)
		want  bool
	}{
		{"no plan.md", func(string) {}, false},
		{"empty plan.md", func(dir string) { writeFile(t, dir, MarkerFile, "") }, true},
		{"plan.md with items", func(dir string) { writeFile(t, dir, MarkerFile, "- [ ] a\n") }, true},
		{"plan.md is a folder", func(dir string) { _ = os.Mkdir(filepath.Join(dir, MarkerFile), 0o755) }, false},
		{"other case", func(dir string) { writeFile(t, dir, "PLAN.txt", "- [ ] a\n") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(dir)
			file, ok := Marker().Detect(dir)
			if ok != tt.want {
				t.Fatalf("Detect = %v, want %v", ok, tt.want)
			}
			if ok && file != MarkerFile {
				t.Errorf("file = %q, want %q", file, MarkerFile)
			}
		})
	}
}

func TestMarkerLoad(t *testing.T) {
	tests := []struct {
		name        string
		plan        string
		wantDefault string
		wantWarning bool
	}{
		{"seeded", "- [ ] one\n- [x] two\n", `[{"content":"one","status":"pending"},{"content":"two","status":"completed"}]`, false},
		{"empty file", "", `[]`, false},
		{"too big", strings.Repeat("- [ ] step\n", MaxSeedBytes/11+1), `[]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, MarkerFile, tt.plan)
			m := Marker()
			if m.Name() != "planning" {
				t.Errorf("Name = %q", m.Name())
			}
			c, err := m.Load(context.Background(), &router.Route{ID: "/r", Dir: dir}, path)
			if err != nil {
				t.Fatal(err)
			}
			f := checkContributionShape(t, c)
			checkSeed(t, c, f, path, tt.wantDefault, tt.wantWarning)
		})
	}
}

// checkContributionShape checks what planning contributes whatever the
// seed: the writeTodos tool, one todos field with the replace reducer and
// a JSON schema, the plan_revisions field, one prompt and one transformer.
// It returns the todos field.
func checkContributionShape(t *testing.T, c *capabilities.Contribution) capabilities.Field {
	t.Helper()
	if len(c.Tools) != 1 || c.Tools[0].Spec().Name != ToolName {
		t.Errorf("tools = %v, want writeTodos", c.Tools)
	}
	if len(c.Fields) != 2 || c.Fields[1].Name != RevisionsField || c.Fields[1].Type != "object" || c.Fields[1].Reducer != capabilities.Replace {
		t.Fatalf("fields = %v, want todos and plan_revisions", c.Fields)
	}
	f := c.Fields[0]
	if f.Name != StateField || f.Type != "array" || f.Reducer != capabilities.Replace {
		t.Errorf("field = %+v", f)
	}
	if !json.Valid(f.Schema) {
		t.Errorf("schema is not JSON: %s", f.Schema)
	}
	if len(c.Prompts) != 1 || len(c.Transformers) != 1 {
		t.Errorf("prompts %d, transformers %d; want 1 each", len(c.Prompts), len(c.Transformers))
	}
	return f
}

// checkSeed checks the seed plan.md at path gave: the field's default and
// the details are wantDefault, and there is one warning naming the file
// exactly when wantWarning.
func checkSeed(t *testing.T, c *capabilities.Contribution, f capabilities.Field, path, wantDefault string, wantWarning bool) {
	t.Helper()
	if string(f.Default) != wantDefault {
		t.Errorf("default = %s, want %s", f.Default, wantDefault)
	}
	details, err := json.Marshal(c.Details)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"seed":` + wantDefault + `}`; string(details) != want {
		t.Errorf("details = %s, want %s", details, want)
	}
	if got := len(c.Warnings) == 1 && strings.Contains(c.Warnings[0], path); got != wantWarning {
		t.Errorf("warnings = %q, want a warning naming the file: %v", c.Warnings, wantWarning)
	}
}

func TestMarkerLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	_, err := Marker().Load(context.Background(), &router.Route{ID: "/r", Dir: dir}, filepath.Join(dir, MarkerFile))
	if err == nil || !strings.Contains(err.Error(), MarkerFile) {
		t.Errorf("error = %v, want one naming %s", err, MarkerFile)
	}
}

func TestPrepareWithPlanning(t *testing.T) {
	p := prepare(t, "# Plan\n\n- [ ] Understand the customer request\n- [x] Check account context\n")
	state := p.InitialState()
	if want := `[{"content":"Understand the customer request","status":"pending"},{"content":"Check account context","status":"completed"}]`; string(state[StateField]) != want {
		t.Errorf("initial todos = %s, want %s", state[StateField], want)
	}
	if len(p.Prompts) != 1 || len(p.StatePrompts) != 1 {
		t.Fatalf("prompts = %d, state prompts = %d", len(p.Prompts), len(p.StatePrompts))
	}
	// The system prompt's part says how to plan and never shows the plan;
	// the state block's part shows it.
	if got := p.Prompts[0](state); !strings.Contains(got, "writeTodos") || strings.Contains(got, "Check account context") {
		t.Errorf("prompt:\n%s", got)
	}
	if got := p.StatePrompts[0](state); !strings.Contains(got, "- [completed] Check account context") {
		t.Errorf("state prompt:\n%s", got)
	}
	if _, err := p.ApplyInput(state, map[string]json.RawMessage{StateField: json.RawMessage(`[]`)}); err == nil {
		t.Error("a run's input could set todos")
	}
	if len(p.Capabilities) != 1 || p.Capabilities[0].Name != Name {
		t.Errorf("capabilities = %+v", p.Capabilities)
	}
}

func TestPrepareConflicts(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, MarkerFile, "- [ ] a\n")
	writeFile(t, dir, "state.yaml", "todos:\n  type: array\n")
	route := &router.Route{ID: "/support/[tenant]", Dir: dir, Agent: router.Agent{File: filepath.Join(dir, "agent.md")}}
	mine := capabilities.Func("writeTodos", "mine", func(context.Context, struct{}) (string, error) { return "", nil })
	_, err := capabilities.Prepare(context.Background(), route, capabilities.Input{
		Markers:  []capabilities.Marker{Marker()},
		AppTools: []capabilities.AppTool{{Tool: mine}},
	})
	if err == nil {
		t.Fatal("want conflict errors")
	}
	for _, want := range []string{
		"route /support/[tenant]: capability conflict:",
		`capability "planning"`,
		filepath.Join(dir, MarkerFile),
		`tool "writeTodos"`,
		`state field "todos"`,
		filepath.Join(dir, "state.yaml"),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}
