package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/docstext"
)

// TestDocsCronsExample: the crons page's SDK example is the code between
// the docs:crons markers of a client test that passes.
func TestDocsCronsExample(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "tools", "langgraph", "crons.test.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := docstext.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "// docs:crons begin\n")
	region, _, ok2 := strings.Cut(rest, "// docs:crons end\n")
	if !ok || !ok2 {
		t.Fatal("crons.test.mjs has no docs:crons begin/end markers")
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(region, " \n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "  ")) // the test body's indent
	}
	_, after, ok := strings.Cut(docs, "<!-- docs:crons -->\n```js\n")
	block, _, ok2 := strings.Cut(after, "```\n")
	if !ok || !ok2 {
		t.Fatal("the docs have no ```js block after <!-- docs:crons -->")
	}
	if want := strings.Join(lines, "\n") + "\n"; !strings.Contains(block, want) {
		t.Errorf("the crons example in the docs is not the tested code; the test runs:\n%s\nthe docs show:\n%s", want, block)
	}
}
