package typegen

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
)

// agentMD is a small valid agent.md.
const agentMD = "---\ndescription: A test route.\n---\nBe brief.\n"

// writeApp writes files (slash-separated paths relative to the app folder,
// mapped to their contents) into a new temporary app folder.
func writeApp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadApp loads the app in dir with tools, failing the test on problems.
func loadApp(t testing.TB, dir string, tools ...capabilities.AppTool) *app.App {
	t.Helper()
	a, err := app.Load(context.Background(), dir, app.Options{Tools: tools, ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatalf("loading app %s: %v", dir, err)
	}
	return a
}

// rawTool is a tool with a hand-written input schema.
type rawTool struct{ spec capabilities.ToolSpec }

func (t rawTool) Spec() capabilities.ToolSpec { return t.spec }

func (rawTool) Call(context.Context, capabilities.Invocation) (capabilities.Result, error) {
	return capabilities.Result{Output: json.RawMessage(`"ok"`)}, nil
}

// schemaTool is an app tool for route (empty: every route) whose input
// schema is schema.
func schemaTool(route, name, schema string) capabilities.AppTool {
	return capabilities.AppTool{Route: route, Tool: rawTool{capabilities.ToolSpec{Name: name, Description: "Test tool " + name + ".", Schema: json.RawMessage(schema)}}}
}

// memoryApp is an app of one route "/t" with one tool whose input schema
// is schema, built without touching disk.
func memoryApp(schema []byte) *app.App {
	r := &router.Route{ID: "/t", Kind: router.KindAgent, Segments: []router.Segment{{Kind: router.Static, Value: "t"}}}
	p := &capabilities.Prepared{Route: r, Tools: []capabilities.Tool{rawTool{capabilities.ToolSpec{Name: "probe", Schema: schema}}}}
	return &app.App{Routes: map[string]*capabilities.Prepared{r.ID: p}, Config: app.Config{Markers: markers.All()}}
}

// summarize renders declarations compactly for comparisons:
// `X struct{A string "a"; B *Y "b,omitempty"}` or `X = map[string]int64`.
func summarize(decls []*decl) string {
	var lines []string
	for _, d := range decls {
		if !d.object {
			lines = append(lines, d.name+" = "+goType(d.alias))
			continue
		}
		var fields []string
		for _, f := range d.fields {
			fields = append(fields, f.goName+" "+goFieldType(f)+" "+`"`+jsonTag(f)+`"`)
		}
		lines = append(lines, d.name+" struct{"+strings.Join(fields, "; ")+"}")
	}
	return strings.Join(lines, "\n")
}

// todoItemSchema is the schema of the Todo type the registered markers
// contribute.
func todoItemSchema() []byte {
	for _, typ := range contributedTypes(&app.App{Config: app.Config{Markers: markers.All()}}) {
		if typ.Name == "Todo" {
			return typ.Schema
		}
	}
	panic("no marker contributes Todo")
}
