package instructions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/instructions"
)

// docBlock returns the body of the first fenced block after the line
// holding marker in the doc file.
func docBlock(t *testing.T, file, marker string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %q", file, marker)
	}
	_, rest, _ = strings.Cut(rest, "```")
	_, rest, _ = strings.Cut(rest, "\n")
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: the block after %q is not closed", file, marker)
	}
	return body
}

// TestDocsExamples: docs/memory.md shows the example app's memory.md as it
// is, and the section Render makes of it with an AGENTS.md.
func TestDocsExamples(t *testing.T) {
	const doc = "../docs/memory.md"
	file := filepath.Join("..", "examples", "app", "returns", "memory.md")
	text, err := instructions.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := docBlock(t, doc, "An example `returns/memory.md`:"); got != text+"\n" {
		t.Errorf("the memory.md of docs/memory.md is not %s:\n%s", file, got)
	}
	want := instructions.Render([]instructions.Source{
		{Scope: "the whole app", File: "AGENTS.md", Text: "Answer in British English."},
		{Scope: "this route", File: file, Text: text},
	})
	if got := docBlock(t, doc, "not run: the prompt text"); got != want {
		t.Errorf("the prompt of docs/memory.md:\n%s\nwant\n%s", got, want)
	}
}
