package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clientExample reads the ```js block after <!-- marker --> in
// docs/page, and the code between // docs:begin and // docs:end of
// tools/clients/testFile, which a client library test runs; test is the
// whole test file.
func clientExample(t *testing.T, page, marker, testFile string) (example, code, test string) {
	t.Helper()
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- "+marker+" -->\n```js\n")
	if !ok {
		t.Fatalf("docs/%s has no ```js block after <!-- %s -->", page, marker)
	}
	example, _, _ = strings.Cut(rest, "```")
	src, err := os.ReadFile(filepath.Join(root, "tools", "clients", testFile))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok = strings.Cut(string(src), "// docs:begin\n")
	if !ok {
		t.Fatalf("%s has no // docs:begin marker", testFile)
	}
	code, _, ok = strings.Cut(rest, "// docs:end")
	if !ok {
		t.Fatalf("%s has no // docs:end marker", testFile)
	}
	return example, code, string(src)
}

// checkExampleImports fails t for an import line of example that the
// tested code's file does not have.
func checkExampleImports(t *testing.T, what, example, test string) {
	t.Helper()
	for line := range strings.Lines(example) {
		if strings.HasPrefix(line, "import ") && !strings.Contains(test, line) {
			t.Errorf("the docs' %s example imports what the tested code does not: %s", what, line)
		}
	}
}
