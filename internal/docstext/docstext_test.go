package docstext

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// TestReadmeIsShort: the README is the front door; the manual lives in docs/.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it at most 250 and move the rest to docs/", n)
	}
}

var (
	testName    = regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9]+|\w+_test\.(go|mjs)\b`)
	issueNumber = regexp.MustCompile(`(?i)\bissue #?\d+`)
	localLink   = regexp.MustCompile(`\]\(([^)#:]+\.(md|png|svg))(#[^)]*)?\)`)
)

// TestDocsSpeakToUsers: user docs name no test and no issue number, and
// every relative link points at a file that exists.
func TestDocsSpeakToUsers(t *testing.T) {
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, bad := range []*regexp.Regexp{testName, issueNumber} {
			if m := bad.FindString(text); m != "" {
				t.Errorf("%s names %q: user docs say what the code does, not which test or issue shows it", f, m)
			}
		}
		for _, m := range localLink.FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), m[1])); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}
