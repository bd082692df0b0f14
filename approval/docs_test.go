package approval

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/approval/bashrules"
	"gopkg.in/yaml.v3"
)

// TestDocsVerdicts: the table of verdicts in docs/permissions.md is what
// the matcher says of each command under the page's first dawn.yaml.
func TestDocsVerdicts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "permissions.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(text)
	if block == nil {
		t.Fatal("docs/permissions.md has no yaml block")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block[1]), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := parseSettings(ConfigKey, doc.Content[0].Content[1])
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(text, "| command | verdict |")
	table, _, _ = strings.Cut(table, "\n\n")
	rows := regexp.MustCompile("(?m)^\\| `((?:[^`])*)` \\| (runs|refused|unknown)").FindAllStringSubmatch(table, -1)
	if len(rows) < 8 {
		t.Fatalf("found %d rows in the verdict table", len(rows))
	}
	want := map[string]bashrules.Verdict{"runs": bashrules.Allowed, "refused": bashrules.Denied, "unknown": bashrules.Unknown}
	for _, r := range rows {
		command := strings.ReplaceAll(r[1], `\|`, "|")
		if got := s.bash.Judge(command, nil).Verdict; got != want[r[2]] {
			t.Errorf("docs say %q %s; the matcher says %v", command, r[2], got)
		}
	}
}
