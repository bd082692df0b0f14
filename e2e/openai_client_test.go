package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestOpenAIClientLibrary drives the OpenAI-compatible endpoint of the
// example app's own binary (`dawn start`, API key on, openai:gpt-4o-mini
// on aimock) with the official openai npm package:
// tools/clients/openai.test.mjs asks a route for a completion (whose
// agent calls a tool inside the server) and a stream, lists the models,
// and checks the SDK's error classes.
func TestOpenAIClientLibrary(t *testing.T) {
	dir := nodetool.Package(t, "clients", filepath.Join("openai", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(requireNodeEnv) == "1" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH: %v", err)
	}
	mock := startAimock(t, "testdata/openai_client.json")
	bin := buildExampleApp(t)
	const key = "openai-test-key"
	url := startDawn(t, bin, copyExampleApp(t), "DAWN_API_KEY="+key, "DAWN_MODEL=openai:gpt-4o-mini",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_CORS_ORIGINS=")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join(dir, "openai.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_API_KEY="+key, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tools/clients/openai.test.mjs against %s: %v\n%s", url, err, out)
	}
	t.Logf("node --test tools/clients/openai.test.mjs:\n%s", out)
}

// TestDocsOpenAIExample checks that the OpenAI API page's JavaScript
// example is the code between the docs markers of
// tools/clients/openai.test.mjs, which TestOpenAIClientLibrary runs.
func TestDocsOpenAIExample(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "openai-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "<!-- docs:openai -->\n```js\n")
	if !ok {
		t.Fatal("docs/openai-api.md has no ```js block after <!-- docs:openai -->")
	}
	example, _, _ := strings.Cut(rest, "```")
	test, err := os.ReadFile(filepath.Join(root, "tools", "clients", "openai.test.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok = strings.Cut(string(test), "// docs:begin\n")
	if !ok {
		t.Fatal("openai.test.mjs has no // docs:begin marker")
	}
	code, _, ok := strings.Cut(rest, "// docs:end")
	if !ok {
		t.Fatal("openai.test.mjs has no // docs:end marker")
	}
	if !strings.HasSuffix(example, code) {
		t.Errorf("the docs' OpenAI example does not end with the tested code.\ndocs:\n%s\ntools/clients/openai.test.mjs:\n%s", example, code)
	}
	for line := range strings.Lines(example) {
		if strings.HasPrefix(line, "import ") && !strings.Contains(string(test), line) {
			t.Errorf("the docs' OpenAI example imports what the tested code does not: %s", line)
		}
	}
}
