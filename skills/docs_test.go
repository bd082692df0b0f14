package skills_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/skills"
)

// docBlock returns the body of the fenced block that follows the line
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

// TestDocsExamples: docs/skills.md shows the example app's refunds skill
// as it is, and the prompt section this package renders for it.
func TestDocsExamples(t *testing.T) {
	const doc = "../docs/skills.md"
	file := filepath.Join("..", "examples", "app", "returns", "skills", "refunds", "SKILL.md")
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := docBlock(t, doc, "not run: a SKILL.md file"); got != string(want) {
		t.Errorf("the SKILL.md of docs/skills.md is not %s:\n%s", file, got)
	}
	app := filepath.Join("..", "examples", "app")
	set, _, err := skills.Load(&router.Route{ID: "/returns", Dir: filepath.Join(app, "returns"), RelDir: "returns"})
	if err != nil {
		t.Fatal(err)
	}
	if got := docBlock(t, doc, "not run: the prompt text"); got != skills.RenderPrompt(set) {
		t.Errorf("the prompt of docs/skills.md:\n%s\nwant\n%s", got, skills.RenderPrompt(set))
	}
}
