package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// fakeMarker is a marker for tests: it applies when its file exists in the
// route folder and contributes what it is given.
type fakeMarker struct {
	name        string
	file        string
	contrib     Contribution
	loadErr     error
	loadPanic   any
	detectPanic any
	// loaded records the paths Load was called with.
	loaded *[]string
}

func (m fakeMarker) Name() string { return m.name }

func (m fakeMarker) Detect(dir string) (string, bool) {
	if m.detectPanic != nil {
		panic(m.detectPanic)
	}
	info, err := os.Stat(filepath.Join(dir, m.file))
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	return m.file, true
}

func (m fakeMarker) Load(_ context.Context, _ *router.Route, path string) (*Contribution, error) {
	if m.loaded != nil {
		*m.loaded = append(*m.loaded, path)
	}
	if m.loadPanic != nil {
		panic(m.loadPanic)
	}
	if m.loadErr != nil {
		return nil, m.loadErr
	}
	c := m.contrib
	return &c, nil
}

// checklist is a fake capability like planning: marker file checklist.md,
// tool writeChecklist, field checklist (replace), one prompt and one
// transformer.
func checklist() fakeMarker {
	return fakeMarker{
		name: "checklist",
		file: "checklist.md",
		contrib: Contribution{
			Tools:        []Tool{namedTool("writeChecklist")},
			Fields:       []Field{{Name: "checklist", Type: "array", Default: json.RawMessage(`[]`), Reducer: Replace}},
			Prompts:      []Prompt{func(thread.State) string { return "## Checklist" }},
			Transformers: []Transformer{func(ToolEvent) []stream.Event { return nil }},
			Details:      map[string]any{"items": 0},
		},
	}
}

// namedTool is a tool that does nothing, for name checks.
func namedTool(name string) Tool {
	return Func(name, "test tool "+name, func(context.Context, struct{}) (string, error) { return "ok", nil })
}

// routeDir makes a route folder holding files (name → content) and returns
// its route.
func routeDir(t *testing.T, id string, files map[string]string) *router.Route {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &router.Route{ID: id, Dir: dir, Agent: router.Agent{File: filepath.Join(dir, "agent.md")}}
}

// errorList splits a joined error into its messages.
func errorList(err error) []string {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		var msgs []string
		for _, e := range joined.Unwrap() {
			msgs = append(msgs, e.Error())
		}
		return msgs
	}
	return []string{err.Error()}
}
