package harness_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
)

// twoLevelApp is a /lead route whose harness-owned plan delegates its first
// item to the researcher subagent, whose own harness-owned plan has a
// verifier: the sourcesFound tool, which passes once found is set.
func twoLevelApp(t *testing.T, front string) (string, apptest.Options, *atomic.Bool) {
	dir := apptest.WriteApp(t, map[string]string{
		"lead/agent.md":                      "You lead.",
		"lead/plan.md":                       "---\nenforce: true\n" + front + "---\n- [ ] Research the market\n- [ ] Write the report\n",
		"lead/subagents/researcher/agent.md": "You research.",
		"lead/subagents/researcher/plan.md":  "---\nenforce: true\n---\n- [ ] Find sources\n  - verify: tool sourcesFound\n",
	})
	found := &atomic.Bool{}
	opts := apptest.Options{Tools: []capabilities.AppTool{{Tool: capabilities.Func("sourcesFound", "checks the sources", func(context.Context, struct{}) (string, error) {
		if !found.Load() {
			return "", errors.New("no sources in the notes")
		}
		return "3 sources", nil
	})}}}
	return dir, opts, found
}

func delegate() map[string]any {
	return map[string]any{"subagent": "researcher", "input": "Find sources on the market", "item": "Research the market"}
}

// TestNestedPlan: the subagent's plan is nested under the parent's item it
// carried out, on plan_update and GET /threads/:id/plan; the subagent's
// finished plan completes the item, with its answer and verified steps as
// the evidence, while Dawn's subagent.plan_update still streams as sent.
func TestNestedPlan(t *testing.T) {
	dir, opts, found := twoLevelApp(t, "")
	found.Store(true)
	model := dawntest.Script().
		CallTool("task", delegate()).
		CallTool("writeTodos", done("Find sources", "found them")).
		Reply("Found 3 sources.").
		CallTool("writeTodos", revisedTodos("report written", [2]string{"Research the market", "completed"}, [2]string{"Write the report", "completed"})).
		Reply("Report written.")
	h := apptest.New(t, dir, model, opts)
	base := h.Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/n1/runs/stream", apptest.RunBody("/lead", "write a market report")))
	nested, forwarded := false, false
	for _, e := range events {
		nested = nested || (e.Type == "plan_update" && strings.Contains(string(e.Data), `"children":[{`))
		forwarded = forwarded || e.Type == "subagent.plan_update"
	}
	if !nested || !forwarded {
		t.Fatalf("plan_update with children %v, subagent.plan_update %v; want both", nested, forwarded)
	}
	p := planOf(t, base, "n1")
	it := p.Items[0]
	if p.State != harness.Done || it.Status != harness.Completed || len(it.Children) != 1 {
		t.Fatalf("plan %s, item %+v; want done with the item completed and one child", p.State, it)
	}
	c := it.Children[0]
	if c.Subagent != "researcher" || c.RouteID != "/lead/subagents/researcher" || !c.Owned || c.State != harness.Done || len(c.Todos) != 1 ||
		c.Todos[0].Verification == nil || !c.Todos[0].Verification.Passed {
		t.Fatalf("child = %+v; want the researcher's done plan with its verified step", c)
	}
	if it.Evidence != "subagent researcher finished its plan (1 steps, 1 verified): Found 3 sources." {
		t.Fatalf("item evidence = %q", it.Evidence)
	}
}

// TestNestedPlanChildFails: a subagent whose plan fails (its verifier
// refuses its claim, and it aborts) fails the parent's item attempt; at
// the parent's retry_cap the parent's plan pauses, with the failed child
// plan nested under the item.
func TestNestedPlanChildFails(t *testing.T) {
	dir, opts, _ := twoLevelApp(t, "retry_cap: 1\n")
	model := dawntest.Script().
		CallTool("task", delegate()).
		CallTool("writeTodos", done("Find sources", "found them")).
		CallTool("stepFailed", map[string]any{"next": "abort", "reason": "no sources to be found"}).
		Reply("Could not find sources.").
		Reply("unreached")
	h := apptest.New(t, dir, model, opts)
	base := h.Serve(t)
	apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/n2/runs/stream", apptest.RunBody("/lead", "write a market report")))
	p := planOf(t, base, "n2")
	it := p.Items[0]
	if p.State != harness.Paused || p.PauseReason != harness.PauseRetryCap || it.Status != harness.InProgress || it.Attempts != 1 || len(it.Children) != 1 {
		t.Fatalf("plan %s (%s), item %+v; want paused at the retry cap with the item's failed attempt", p.State, p.PauseReason, it)
	}
	c := it.Children[0]
	if c.State != harness.Failed || c.Todos[0].Verification == nil || c.Todos[0].Verification.Passed || !strings.Contains(c.Todos[0].Verification.Output, "no sources in the notes") {
		t.Fatalf("child = %+v; want the failed plan with its failed verification", c)
	}
}
