package e2e

import (
	"path/filepath"
	"testing"

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
	mock := startAimock(t, "testdata/langgraph_bash.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "dawn.yaml"), "sandbox: {provider: local}\npermissions:\n  mode: interactive\n  allow: {bash: [echo]}\n")
	writeFile(t, filepath.Join(app, "coder", "agent.md"), "---\nmodel: openai:gpt-4o-mini\nworkspace: thread\n---\nYou run commands.\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	runNodeTests(t, dir, "sandbox.e2e.mjs", "LangGraph sandbox permission tests", 4, "DAWN_SANDBOX_URL="+url)
}
