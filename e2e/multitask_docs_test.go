package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsMultitaskExamples: every SDK example of the multitask page is
// the code between a pair of docs:multitask markers of the client test
// that runs it against two replicas (reliability's
// TestMultitaskAcrossReplicas).
func TestDocsMultitaskExamples(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "tools", "langgraph", "multitask.e2e.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	regions := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?s)// docs:multitask ([\w-]+) begin\n(.*?)\n\s*// docs:multitask ([\w-]+) end\n`).FindAllStringSubmatch(string(src), -1) {
		var lines []string
		for _, line := range strings.Split(m[2], "\n") {
			lines = append(lines, strings.TrimPrefix(line, "  ")) // the test body's indent
		}
		regions[strings.Join(lines, "\n")] = true
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "multitask.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- docs:multitask -->\n```js\n(.*?)\n```\n").FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 5 || len(regions) < 5 {
		t.Fatalf("%d examples in the page, %d marked regions in the test; want at least 5 of each", len(blocks), len(regions))
	}
	for _, b := range blocks {
		if !regions[b[1]] {
			t.Errorf("this example of docs/multitask.md is no marked region of multitask.e2e.mjs:\n%s", b[1])
		}
	}
}
