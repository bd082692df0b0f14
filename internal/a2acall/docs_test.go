package a2acall_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/a2acall"
	"github.com/dawn-go/dawn/internal/docstext"
)

// TestDocs: every a2a.yaml example of docs/a2a-calling.md parses, and
// every other block is marked as not run.
func TestDocs(t *testing.T) {
	blocks, err := docstext.Blocks(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, b := range blocks {
		if filepath.Base(b.File) != "a2a-calling.md" {
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
		t.Error("docs/a2a-calling.md has no a2a.yaml example")
	}
}
