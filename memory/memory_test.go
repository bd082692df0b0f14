package memory_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/instructions"
	"github.com/dawn-go/dawn/memory"
)

// TestForwards: the deprecated names are the instructions package's, so an
// app written against memory keeps its behaviour.
func TestForwards(t *testing.T) {
	if memory.Name != instructions.Name || memory.RouteFile != instructions.RouteFile ||
		memory.AppFile != instructions.AppFile || memory.MaxFileSize != instructions.MaxFileSize {
		t.Errorf("memory's constants differ from instructions'")
	}
	if got, want := memory.Marker().Name(), instructions.Marker().Name(); got != want {
		t.Errorf("memory.Marker().Name() = %q, want %q", got, want)
	}
	sources := []memory.Source{{Scope: "the whole app", File: "AGENTS.md", Text: "Answer briefly."}}
	if got, want := memory.Render(sources), instructions.Render(sources); got != want || got == "" {
		t.Errorf("memory.Render = %q, want %q", got, want)
	}
	file := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(file, []byte("\xEF\xBB\xBF Escalate refunds.\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := memory.ReadFile(file); err != nil || got != "Escalate refunds." {
		t.Errorf("memory.ReadFile = %q, %v", got, err)
	}
	if _, err := memory.ReadFile(filepath.Join(t.TempDir(), "none.md")); err == nil {
		t.Error("memory.ReadFile of a missing file: no error")
	}
}
