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
	example, code, test := clientExample(t, "openai-api.md", "docs:openai", "openai.test.mjs")
	if !strings.HasSuffix(example, code) {
		t.Errorf("the docs' OpenAI example does not end with the tested code.\ndocs:\n%s\ntools/clients/openai.test.mjs:\n%s", example, code)
	}
	checkExampleImports(t, "OpenAI", example, test)
}
