package docstext

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
		text := withoutFenceInfo(string(data))
		for _, bad := range []*regexp.Regexp{testName, issueNumber} {
			for _, m := range bad.FindAllString(text, -1) {
				if m != "example_test.go" { // Go's Example functions are documentation
					t.Errorf("%s names %q: user docs say what the code does, not which test or issue shows it", f, m)
				}
			}
		}
		for _, m := range localLink.FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), m[1])); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}

// TestEveryPageIsLinked: every page of docs/ is reachable from the
// README's links, so none is written and then lost.
func TestEveryPageIsLinked(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if !strings.Contains(string(readme), "](docs/"+filepath.Base(p)+")") {
			t.Errorf("docs/%s is not linked from the README's Documentation section", filepath.Base(p))
		}
	}
}

// withoutFenceInfo drops the info strings of code fences ("go
// examples/app/typegen_test.go" names the file a block is copied from,
// which a rendered page does not show).
func withoutFenceInfo(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestEveryBlockRunsOrSaysWhyNot: every code block of the README and docs/
// is checked by a test, or is marked <!-- not run: reason --> on the line
// before it. Which test checks which block:
//
//   - go: examples/app TestReadmeGoExamples (copied from the example app
//     or examples/notes); "go FILE" (a block naming its file): e2e
//     TestDocsCodeIsReal (copied from that file); in tools.md, the root
//     package's TestToolsDocsCodeIsReal;
//   - markdown, md: examples/app TestReadmeFileExamples and
//     TestDocsAgentExamples (parsed as plan.md or agent.md);
//   - json with "steps": TestReadmeFileExamples (a plan-first plan);
//   - yaml: examples/app TestDocsConfigExamples (loaded as dawn.yaml);
//   - yaml marked <!-- eval case: ROUTE -->: examples/app
//     TestDocsEvalExamples (run as eval cases of ROUTE in the example app);
//   - sh made only of curl commands to 127.0.0.1:PORT: examples/app
//     TestReadmeExamples (run against the example app);
//   - the README's other sh blocks: e2e TestNewcomerPath;
//   - readme:stream, readme:agui, readme:langgraph,
//     readme:langgraph-interrupt, docs:aimock-fixture, docs:openai,
//     docs:mcp-client, docs:a2a, docs:crons and docs:multitask markers: the tests
//     that look for them;
//   - the dawn-build marker: internal/deploy TestDocsShowWhatBuildWrites
//     (every line is in the file the fence names, as dawn build writes it).
func TestEveryBlockRunsOrSaysWhyNot(t *testing.T) {
	blocks, err := Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 20 {
		t.Fatalf("found %d blocks; the parser is broken", len(blocks))
	}
	for _, b := range blocks {
		if checked(b) {
			continue
		}
		if why, ok := strings.CutPrefix(b.Marker, "not run:"); ok && strings.TrimSpace(why) != "" {
			continue
		}
		t.Errorf("%s:%d: a %q block that no test runs; make a test check it, or put <!-- not run: why --> on the line before it", b.File, b.Line, b.Lang)
	}
}

var runMarkers = []string{"readme:stream", "readme:agui", "readme:langgraph", "readme:langgraph-interrupt", "docs:aimock-fixture", "docs:openai", "docs:mcp-client", "docs:a2a", "docs:crons", "docs:multitask", "dawn-build"}

// checked reports whether a test named in TestEveryBlockRunsOrSaysWhyNot
// checks b.
func checked(b Block) bool {
	switch {
	case slices.Contains(runMarkers, b.Marker):
		return true
	case b.Lang == "go", b.Lang == "markdown", b.Lang == "md", b.Lang == "yaml", strings.HasPrefix(b.Marker, "eval case:"):
		return true
	case strings.HasPrefix(b.Lang, "go "):
		return slices.Contains([]string{"capabilities.md", "client.md", "store.md", "webhooks.md", "auth.md", "tools.md"}, filepath.Base(b.File))
	case b.Lang == "json":
		return strings.Contains(b.Text, `"steps"`)
	case b.Lang == "sh" && filepath.Base(b.File) == "README.md" && b.Marker == "":
		return true
	case b.Lang == "sh":
		return onlyCurl(b.Text)
	}
	return false
}

// onlyCurl reports whether every command of an sh block is a curl to the
// example app's address.
func onlyCurl(text string) bool {
	cmds := strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n")
	n := 0
	for _, c := range cmds {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if !strings.HasPrefix(c, "curl ") || !strings.Contains(c, "http://127.0.0.1:PORT") {
			return false
		}
		n++
	}
	return n > 0
}
