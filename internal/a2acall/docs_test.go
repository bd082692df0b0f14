package a2acall_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/a2acall"
	"github.com/dawn-go/dawn/internal/docstext"
)

// callingSection is the heading of docs/a2a.md's half on calling remote
// agents.
const callingSection = "## Calling remote A2A agents\n"

// TestDocs: every a2a.yaml example of docs/a2a.md parses, and every other
// block of its half on calling remote agents is marked as not run.
func TestDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "a2a.md"))
	if err != nil {
		t.Fatal(err)
	}
	before, _, ok := strings.Cut(string(page), callingSection)
	if !ok {
		t.Fatalf("docs/a2a.md has no %q heading", strings.TrimSpace(callingSection))
	}
	// from is the line of the heading, counted from 1.
	from := strings.Count(before, "\n") + 1
	blocks, err := docstext.Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, b := range blocks {
		if filepath.Base(b.File) != "a2a.md" || b.Line < from {
			continue
		}
		if b.Marker != "docs:"+a2acall.FileName {
			if !strings.HasPrefix(b.Marker, "not run: ") {
				t.Errorf("%s:%d: a %s block is neither an a2a.yaml example nor marked <!-- not run: reason -->", b.File, b.Line, b.Lang)
			}
			continue
		}
		examples++
		path := filepath.Join(t.TempDir(), a2acall.FileName)
		if err := os.WriteFile(path, []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := a2acall.Parse(path, "pricing"); err != nil {
			t.Errorf("%s:%d: this a2a.yaml example does not parse: %v", b.File, b.Line, err)
		}
	}
	if examples == 0 {
		t.Error("docs/a2a.md has no a2a.yaml example after its calling heading")
	}
}
