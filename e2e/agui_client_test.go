package e2e

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/docstext"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// requireNodeEnv makes missing Node.js test tools fail the test instead of
// skipping it. .ci/run sets it.
const requireNodeEnv = "DAWN_REQUIRE_NODE"

// TestAGUIClientLibrary drives the AG-UI endpoint of the example app's own
// binary (`dawn start`, offline model, API key on) with the client library
// Dawn's front ends use: tools/clients/agui.test.mjs runs @ag-ui/client's
// HttpAgent under `node --test` and checks the events against @ag-ui/core's
// schemas, the text, the tool calls, and the shared plan against the
// thread's saved state.
func TestAGUIClientLibrary(t *testing.T) {
	dir := nodetool.Package(t, "clients", filepath.Join("@ag-ui", "client", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(requireNodeEnv) == "1" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH: %v", err)
	}
	bin := buildExampleApp(t)
	const key = "agui-test-key"
	url := startDawn(t, bin, copyExampleApp(t), "DAWN_API_KEY="+key, "DAWN_MODEL=", "DAWN_CORS_ORIGINS=")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join(dir, "agui.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_API_KEY="+key, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tools/clients/agui.test.mjs against %s: %v\n%s", url, err, out)
	}
	t.Logf("node --test tools/clients/agui.test.mjs:\n%s", out)
}

// buildExampleApp builds examples/app, the example app's own dawn binary
// with its Go tools.
func buildExampleApp(t *testing.T) string {
	t.Helper()
	return built(t, "examples/app")
}

// copyExampleApp copies the example app's route files (everything but Go
// code) into a temp folder, so its thread store is the test's own.
func copyExampleApp(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "examples", "app")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		switch {
		case d.IsDir() && (rel == ".dawn" || rel == "dawngen"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case strings.HasSuffix(path, ".go"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the example app: %v", err)
	}
	return dst
}

// TestReadmeAGUIExample checks that the README's JavaScript example is the
// code between the readme markers of tools/clients/agui.test.mjs, which
// TestAGUIClientLibrary runs.
func TestReadmeAGUIExample(t *testing.T) {
	root := repoRoot(t)
	docs, err := docstext.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	readme := []byte(docs)
	_, rest, ok := strings.Cut(string(readme), "<!-- readme:agui -->\n```js\n")
	if !ok {
		t.Fatal("the docs have no ```js block after <!-- readme:agui -->")
	}
	example, _, _ := strings.Cut(rest, "```")
	test, err := os.ReadFile(filepath.Join(root, "tools", "clients", "agui.test.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok = strings.Cut(string(test), "// readme:begin\n")
	if !ok {
		t.Fatal("agui.test.mjs has no // readme:begin marker")
	}
	code, _, ok := strings.Cut(rest, "// readme:end")
	if !ok {
		t.Fatal("agui.test.mjs has no // readme:end marker")
	}
	var lines []string
	for line := range strings.Lines(code) {
		lines = append(lines, strings.TrimPrefix(line, "  "))
	}
	if got := strings.TrimRight(strings.Join(lines, ""), " "); !strings.HasSuffix(example, got) {
		t.Errorf("the docs' AG-UI example does not end with the tested code.\ndocs:\n%s\ntools/clients/agui.test.mjs:\n%s", example, got)
	}
	for line := range strings.Lines(example) {
		if strings.HasPrefix(line, "import ") && !strings.Contains(string(test), line) {
			t.Errorf("the docs' AG-UI example imports what the tested code does not: %s", line)
		}
	}
}
