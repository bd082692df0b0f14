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
)

// TestLangGraphConformance runs tools/langgraph/conformance.e2e.mjs, the
// LangGraph SDK's client, against the stock dawn binary on aimock
// (testdata/langgraph_conformance.json) serving /agent (a route whose
// model calls writeTodos, then answers) and /teams/[team] (a prompt
// template reading the team): assistants with their versions and
// overrides, thread metadata updates, input edge cases, errors by name,
// the stream modes of the agent/tools graph, interrupt_before and
// interrupt_after, recursion_limit, Studio's calls and the default
// assistants LANGGRAPH_CONFIG configures. The script reads
// aimock's journal (DAWN_AIMOCK_URL) to see what the model was sent.
func TestLangGraphConformance(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	mock := startAimock(t, "testdata/langgraph_conformance.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "agent", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou are the agent.\n")
	writeFile(t, filepath.Join(app, "agent", "plan.md"), "- [ ] Answer\n")
	writeFile(t, filepath.Join(app, "agent", "skills", "greet", "SKILL.md"), "---\nname: greet\ndescription: How to greet.\n---\nSay hello.\n")
	writeFile(t, filepath.Join(app, "teams", "[team]", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou serve team {{ .Params.team }}.\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test",
		`LANGGRAPH_CONFIG={"teams/[team]": {"configurable": {"team": "blue"}}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", "conformance.e2e.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_CONFORMANCE_URL="+url, "DAWN_AIMOCK_URL="+mock, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test conformance.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the LangGraph conformance tests failed: %v (their output is above)", err)
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) == "0" {
		t.Fatalf("node --test ran no passing tests")
	}
	if m := regexp.MustCompile(`(?m)^ℹ fail (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Fatalf("node --test reported failures")
	}
}
