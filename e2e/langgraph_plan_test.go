package e2e

import (
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestLangGraphPlanRevisions runs tools/langgraph/plan.e2e.mjs, the
// LangGraph SDK's client, against the stock dawn binary on aimock
// (testdata/langgraph_drift.json) serving a route with a harness-owned
// plan of two items, and a route with a plain plan.md of two, where the
// model drops the unfinished one: the SDK reads the revision, its diff
// and the dropped item from the thread's values (the harness's plan, the
// plain plan's plan_revisions), as GET /threads/:id/plan/revisions serves
// them.
func TestLangGraphPlanRevisions(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	mock := startAimock(t, "testdata/langgraph_drift.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "feature", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou ship features.\n")
	writeFile(t, filepath.Join(app, "feature", "plan.md"), "---\nenforce: true\n---\n- [ ] Write the code\n- [ ] Write the tests\n")
	writeFile(t, filepath.Join(app, "chores", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou do chores.\n")
	writeFile(t, filepath.Join(app, "chores", "plan.md"), "- [ ] Sweep the floor\n- [ ] Clean the windows\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	runNodeTests(t, dir, "plan.e2e.mjs", "LangGraph plan revision tests", 2, "DAWN_PLAN_URL="+url)
}
