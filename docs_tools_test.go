package dawn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsDocsCodeIsReal: every Go block of docs/tools.md that names a
// file is copied from that file, so the docs show code that compiles and
// runs (constrain_example_test.go is an Example go test runs).
func TestToolsDocsCodeIsReal(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, part := range strings.Split(string(text), "```go ")[1:] {
		file, rest, _ := strings.Cut(part, "\n")
		block, _, _ := strings.Cut(rest, "```")
		src, err := os.ReadFile(filepath.FromSlash(strings.TrimSpace(file)))
		if err != nil || !strings.Contains(string(src), block) {
			t.Errorf("docs/tools.md: this block is not in %s (%v):\n%s", file, err, block)
		}
		blocks++
	}
	if blocks == 0 {
		t.Fatal("docs/tools.md has no Go block naming its file")
	}
}
