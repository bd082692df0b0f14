package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
)

// TestLangGraphSandboxPermissions runs tools/langgraph/sandbox.e2e.mjs,
// the LangGraph SDK's client, against the stock dawn binary on aimock
// (testdata/langgraph_bash.json) serving a route with a local sandbox in
// interactive mode that allows only echo: a command no rule covers parks
// on an interrupt of kind command, and command.resume approves it once,
// denies it or edits it; an allowed command runs without asking.
func TestLangGraphSandboxPermissions(t *testing.T) {
	sandboxtest.Bwrap(t)
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	mock := startAimock(t, "testdata/langgraph_bash.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "dawn.yaml"), "sandbox: {provider: local}\npermissions:\n  mode: interactive\n  allow: {bash: [echo]}\n")
	writeFile(t, filepath.Join(app, "coder", "agent.md"), "---\nmodel: openai:gpt-4o-mini\nworkspace: thread\n---\nYou run commands.\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", "sandbox.e2e.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_SANDBOX_URL="+url, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test sandbox.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the LangGraph sandbox permission tests failed: %v (their output is above)", err)
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "4" {
		t.Fatalf("node --test did not pass its 4 tests")
	}
	if m := regexp.MustCompile(`(?m)^ℹ fail (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Fatalf("node --test reported failures")
	}
}
