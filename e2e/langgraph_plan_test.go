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

// TestLangGraphPlanRevisions runs tools/langgraph/plan.e2e.mjs, the
// LangGraph SDK's client, against the stock dawn binary on aimock
// (testdata/langgraph_drift.json) serving a route with a harness-owned
// plan of two items, where the model drops the unfinished one: the SDK
// reads the revision, its diff and the dropped item from the thread's
// values, as GET /threads/:id/plan/revisions serves them.
func TestLangGraphPlanRevisions(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	mock := startAimock(t, "testdata/langgraph_drift.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "feature", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou ship features.\n")
	writeFile(t, filepath.Join(app, "feature", "plan.md"), "---\nenforce: true\n---\n- [ ] Write the code\n- [ ] Write the tests\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", "plan.e2e.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_PLAN_URL="+url, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test plan.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the LangGraph plan revision tests failed: %v (their output is above)", err)
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "1" {
		t.Fatalf("node --test did not pass its test")
	}
	if m := regexp.MustCompile(`(?m)^ℹ fail (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Fatalf("node --test reported failures")
	}
}
