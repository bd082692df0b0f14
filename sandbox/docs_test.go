package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dawn-go/dawn/internal/yamldoc"
)

// fence matches a fenced block of a doc: the line before it, its info
// string and its text.
var fence = regexp.MustCompile("(?m)^(.*)\n```(\\w*)\n((?s:.*?))```\n")

// TestDocsSettings: every dawn.yaml example of docs/sandbox.md (a yaml
// block) is a sandbox section parseSettings takes, and every other block
// is marked as not run.
func TestDocsSettings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "sandbox.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, b := range fence.FindAllStringSubmatch(string(data), -1) {
		before, info, text := b[1], b[2], b[3]
		if info != "yaml" {
			if !regexp.MustCompile(`^<!-- not run: .+ -->$`).MatchString(before) {
				t.Errorf("a %s block is neither a dawn.yaml example nor marked <!-- not run: reason -->:\n%s", info, text)
			}
			continue
		}
		examples++
		root, err := yamldoc.Mapping([]byte(text))
		if err != nil {
			t.Fatalf("docs example is not YAML: %v\n%s", err, text)
		}
		n := root.Content[1]
		if root.Content[0].Value != ConfigKey {
			t.Fatalf("docs example is not a %s section:\n%s", ConfigKey, text)
		}
		if _, err := parseSettings(n); err != nil {
			t.Errorf("docs example does not parse: %v\n%s", err, text)
		}
	}
	if examples == 0 {
		t.Error("docs/sandbox.md has no dawn.yaml example")
	}
}
