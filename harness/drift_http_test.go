package harness_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/eval"
)

type revisionsPage struct {
	Revisions []harness.Revision `json:"revisions"`
	Total     int                `json:"total"`
	NextAfter int                `json:"next_after"`
	Dropped   []harness.Removed  `json:"dropped"`
}

func revisedTodos(reason string, items ...[2]string) map[string]any {
	var list []map[string]string
	for _, it := range items {
		list = append(list, map[string]string{"content": it[0], "status": it[1]})
	}
	return map[string]any{"todos": list, "reason": reason}
}

// TestDriftAudit: a model that deletes the hard item from its plan, then
// rewords one, moves one back and reorders, finishes with every change on
// the record: plan_revised events on the stream carry each diff, the
// deleted item is flagged dropped, and GET /threads/:id/plan/revisions
// pages through the same revisions.
func TestDriftAudit(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"job/agent.md": "You do the job.",
		"job/plan.md":  "---\nenforce: true\n---\n- [ ] Write the code\n- [ ] Write the tests\n- [ ] Write the docs\n",
	})
	model := dawntest.Script().
		CallTool("writeTodos", revisedTodos("the tests are too hard", [2]string{"Write the code", "completed"}, [2]string{"Write the docs", "in_progress"})).
		CallTool("writeTodos", revisedTodos("the code needs another pass", [2]string{"Write the code", "pending"}, [2]string{"Write the README", "in_progress"})).
		CallTool("writeTodos", revisedTodos("all done", [2]string{"Write the README", "completed"}, [2]string{"Write the code", "completed"})).
		Reply("Done.")
	h := apptest.New(t, dir, model, apptest.Options{})
	base := h.Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/d1/runs/stream", apptest.RunBody("/job", "do it")))
	var revised []harness.Revision
	for _, e := range events {
		if e.Type == harness.EventRevised {
			var r harness.Revision
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			revised = append(revised, r)
		}
	}
	if len(revised) < 3 {
		t.Fatalf("plan_revised events = %+v, want one per writeTodos at least", revised)
	}
	first := revised[0].Diff
	if revised[0].Source != "model" || revised[0].Reason != "the tests are too hard" || first == nil || len(first.Removed) != 1 ||
		first.Removed[0].Content != "Write the tests" || !first.Removed[0].Dropped {
		t.Fatalf("the first revision = %+v (diff %+v); want the tests item removed and flagged dropped, with the model's reason", revised[0], first)
	}
	second := revised[1].Diff
	if second == nil || len(second.Reworded) != 1 || second.Reworded[0].From != "Write the docs" || second.Reworded[0].To != "Write the README" ||
		len(second.Removed) != 0 || len(second.Backwards) != 1 || second.Backwards[0].Content != "Write the code" {
		t.Fatalf("the second revision's diff = %+v; want the docs reworded in place and the code moved back to pending", second)
	}
	if third := revised[2].Diff; third == nil || !third.Reordered {
		t.Fatalf("the third revision's diff = %+v; want the list reordered", third)
	}

	// dawn eval's expectations read the same events: the drop fails
	// no_dropped_items, and three list changes pass max_revisions: 3 only.
	yes := true
	results := eval.Check(eval.Expect{DriftExpect: eval.DriftExpect{NoDroppedItems: &yes, MaxRevisions: 2}}, eval.Observe(events))
	if len(results) != 3 || results[1].Pass || !strings.Contains(results[1].Detail, `"Write the tests"`) || results[2].Pass {
		t.Fatalf("eval results = %+v; want no_dropped_items failing on the tests item and max_revisions: 2 failing", results)
	}

	var page revisionsPage
	if code := apptest.GetJSON(t, base+"/threads/d1/plan/revisions?limit=2", &page); code != 200 {
		t.Fatalf("GET revisions = %d", code)
	}
	if len(page.Revisions) != 2 || page.NextAfter != page.Revisions[1].N || page.Total < len(revised) || len(page.Dropped) != 1 || page.Dropped[0].Content != "Write the tests" {
		t.Fatalf("the first page = %+v; want 2 revisions, a next page, and the dropped item", page)
	}
	var all []harness.Revision
	for after := 0; ; {
		var p revisionsPage
		apptest.GetJSON(t, base+"/threads/d1/plan/revisions?limit=2&after="+strconv.Itoa(after), &p)
		all = append(all, p.Revisions...)
		if p.NextAfter == 0 {
			break
		}
		after = p.NextAfter
	}
	if len(all) != page.Total {
		t.Fatalf("paging gave %d revisions, want all %d", len(all), page.Total)
	}
	var bad struct {
		Error struct{ Kind string } `json:"error"`
	}
	if code := apptest.GetJSON(t, base+"/threads/d1/plan/revisions?limit=0", &bad); code != 400 || bad.Error.Kind != "invalid_query" {
		t.Fatalf("limit=0 answered %d %+v, want 400 invalid_query", code, bad)
	}
}

// TestDriftOnOtherWires: the dropped item reaches an AG-UI client as a
// state delta of its shared plan, and the LangGraph dialect's thread
// values (GET /threads/:id/state) carry the plan's revisions with it.
func TestDriftOnOtherWires(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"job/agent.md": "You do the job.",
		"job/plan.md":  "---\nenforce: true\n---\n- [ ] Write the code\n- [ ] Write the tests\n",
	})
	model := dawntest.Script().
		CallTool("writeTodos", revisedTodos("the tests are too hard", [2]string{"Write the code", "completed"})).
		Reply("Done.")
	h := apptest.New(t, dir, model, apptest.Options{})
	base := h.Serve(t)
	body := `{"threadId":"w1","runId":"r1","state":null,"messages":[{"id":"m1","role":"user","content":"go"}],"tools":[],"context":[],"forwardedProps":{}}`
	raw, ops := apptest.AGUIStateDeltas(t, base+"/agui/job", body, false)
	found := false
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/plan/dropped") && strings.Contains(string(op.Value), "Write the tests") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no AG-UI STATE_DELTA adds the dropped item to the shared plan:\n%s", raw)
	}
	var st struct {
		Values struct {
			Plan harness.Plan `json:"plan"`
		} `json:"values"`
	}
	if code := apptest.GetJSON(t, base+"/threads/w1/state", &st); code != 200 {
		t.Fatalf("GET state = %d", code)
	}
	p := st.Values.Plan
	if len(p.Dropped) != 1 || p.Dropped[0].Content != "Write the tests" || len(p.Revisions) == 0 {
		t.Fatalf("thread values' plan = %+v, want the dropped item and the revisions", p)
	}
}
