package planning_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/eval"
	"github.com/dawn-go/dawn/plandiff"
)

// plainTodos is a writeTodos input of a plain plan: content and status
// pairs.
func plainTodos(items ...[2]string) map[string]any {
	var list []map[string]string
	for _, it := range items {
		list = append(list, map[string]string{"content": it[0], "status": it[1]})
	}
	return map[string]any{"todos": list}
}

// plainDriftApp is a route with a plain plan.md of three items.
func plainDriftApp(t *testing.T) string {
	return apptest.WriteApp(t, map[string]string{
		"job/agent.md": "You do the job.",
		"job/plan.md":  "- [ ] Write the code\n- [ ] Write the tests\n- [ ] Write the docs\n",
	})
}

// droppingModel starts the plan, then deletes the hard item from it
// while it is still pending.
func droppingModel() *dawntest.ScriptedModel {
	return dawntest.Script().
		CallTool("writeTodos", plainTodos([2]string{"Write the code", "in_progress"}, [2]string{"Write the tests", "pending"}, [2]string{"Write the docs", "pending"})).
		CallTool("writeTodos", plainTodos([2]string{"Write the code", "completed"}, [2]string{"Write the docs", "in_progress"})).
		Reply("Done.")
}

type plainRevisionsPage struct {
	ThreadID  string              `json:"thread_id"`
	Revisions []plandiff.Revision `json:"revisions"`
	Total     int                 `json:"total"`
	NextAfter int                 `json:"next_after"`
	Dropped   []plandiff.Removed  `json:"dropped"`
}

// TestPlainPlanRevisions: a plain plan.md plan (one the harness does not
// own) whose model drops an item keeps every revision with its diff. The
// SSE stream carries plan_revised for the change with the item flagged
// dropped (plan_update stays {"todos":[...]}), GET
// /threads/:id/plan/revisions serves the revisions as it does a
// harness-owned plan's, dawn eval's no_dropped_items fails on the run, and
// a server restarted on the same SQLite file serves the same revisions.
func TestPlainPlanRevisions(t *testing.T) {
	dir := plainDriftApp(t)
	path := filepath.Join(t.TempDir(), "dawn.db")
	h := apptest.New(t, dir, droppingModel(), apptest.Options{StorePath: path})
	base := h.Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/p1/runs/stream", apptest.RunBody("/job", "do it")))

	var revised []plandiff.Revision
	for _, e := range events {
		switch e.Type {
		case plandiff.EventRevised:
			var r plandiff.Revision
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			revised = append(revised, r)
		case "plan_update":
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(e.Data, &keys); err != nil || len(keys) != 1 || keys["todos"] == nil {
				t.Fatalf("plan_update data = %s, want {\"todos\":[...]} as Dawn sends it", e.Data)
			}
		}
	}
	if len(revised) != 1 {
		t.Fatalf("plan_revised events = %+v; want one, for the call that changed the list (the first only moved a status on)", revised)
	}
	checkDropped(t, "the plan_revised event", revised[0])

	yes := true
	results := eval.Check(eval.Expect{DriftExpect: eval.DriftExpect{NoDroppedItems: &yes, MaxRevisions: 1}}, eval.Observe(events))
	if len(results) != 3 || results[1].Expectation != eval.ExpectNoDroppedItems || results[1].Pass || !strings.Contains(results[1].Detail, `"Write the tests"`) || !results[2].Pass {
		t.Fatalf("eval results = %+v; want no_dropped_items failing on the tests item and max_revisions: 1 passing", results)
	}

	page := plainPage(t, base, "p1")
	if h.Store.Close() != nil {
		t.Fatal("closing the store")
	}
	// Another server on the same file serves the same revisions.
	again := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: path}).Serve(t)
	if after := plainPage(t, again, "p1"); !samePage(page, after) {
		t.Fatalf("after a restart the revisions are %+v, want %+v", after, page)
	}
}

// plainPage reads and checks a plain plan's revisions after
// droppingModel's run.
func plainPage(t *testing.T, base, threadID string) plainRevisionsPage {
	t.Helper()
	var page plainRevisionsPage
	if code := apptest.GetJSON(t, base+"/threads/"+threadID+"/plan/revisions", &page); code != 200 {
		t.Fatalf("GET /threads/%s/plan/revisions = %d, want 200", threadID, code)
	}
	if page.ThreadID != threadID || page.Total != 2 || len(page.Revisions) != 2 || page.Revisions[0].Diff != nil || page.Revisions[0].Source != plandiff.SourceModel {
		t.Fatalf("revisions = %+v; want two by the model, the first a status change with no diff", page)
	}
	checkDropped(t, "the second revision", page.Revisions[1])
	if len(page.Dropped) != 1 || page.Dropped[0].Content != "Write the tests" || page.Dropped[0].Revision != 2 {
		t.Fatalf("dropped = %+v; want the tests item, dropped by revision 2", page.Dropped)
	}
	return page
}

func checkDropped(t *testing.T, what string, r plandiff.Revision) {
	t.Helper()
	d := r.Diff
	if r.N != 2 || r.Source != plandiff.SourceModel || d == nil || len(d.Removed) != 1 || d.Removed[0].Content != "Write the tests" ||
		!d.Removed[0].Dropped || d.Removed[0].Status != "pending" || d.Removed[0].ID == "" || len(d.Added) != 0 || d.Reordered {
		t.Fatalf("%s = %+v (diff %+v); want revision 2 by the model removing the pending tests item, flagged dropped", what, r, d)
	}
}

func samePage(a, b plainRevisionsPage) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestPlainPlanPersonRevision: a person who changes a plain plan's todos
// through a state update (POST /threads/:id/state) makes a revision of
// their own, by "person", with its diff; an update that leaves the todos
// alone makes none; a copy of the thread keeps the revisions.
func TestPlainPlanPersonRevision(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", plainTodos([2]string{"Write the code", "in_progress"}, [2]string{"Write the tests", "pending"}, [2]string{"Write the docs", "pending"})).
		Reply("Started.")
	base := apptest.New(t, plainDriftApp(t), model, apptest.Options{}).Serve(t)
	apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/p2/runs/stream", apptest.RunBody("/job", "do it")))

	edit := `{"values":{"todos":[{"content":"Write the code","status":"in_progress"},{"content":"Write the docs","status":"pending"}]}}`
	if resp := apptest.PostJSON(t, base+"/threads/p2/state", edit); resp.StatusCode != 200 {
		t.Fatalf("POST state = %d", resp.StatusCode)
	}
	if resp := apptest.PostJSON(t, base+"/threads/p2/state", `{"values":{"todos":[{"content":"Write the code","status":"in_progress"},{"content":"Write the docs","status":"pending"}]}}`); resp.StatusCode != 200 {
		t.Fatalf("POST state again = %d", resp.StatusCode)
	}
	var page plainRevisionsPage
	if code := apptest.GetJSON(t, base+"/threads/p2/plan/revisions", &page); code != 200 {
		t.Fatalf("GET revisions = %d", code)
	}
	if page.Total != 2 || len(page.Revisions) != 2 {
		t.Fatalf("revisions = %+v; want the model's and the person's (the same list again is no change)", page)
	}
	r := page.Revisions[1]
	if r.Source != plandiff.SourcePerson || r.Diff == nil || len(r.Diff.Removed) != 1 || r.Diff.Removed[0].Content != "Write the tests" || !r.Diff.Removed[0].Dropped {
		t.Fatalf("the person's revision = %+v (diff %+v); want the tests item removed by a person, flagged dropped", r, r.Diff)
	}

	var copied struct {
		ThreadID string `json:"thread_id"`
	}
	resp := apptest.PostJSON(t, base+"/threads/p2/copy", `{}`)
	if err := json.NewDecoder(resp.Body).Decode(&copied); err != nil || copied.ThreadID == "" {
		t.Fatalf("copy: %v", err)
	}
	resp.Body.Close()
	var fork plainRevisionsPage
	if code := apptest.GetJSON(t, base+"/threads/"+copied.ThreadID+"/plan/revisions", &fork); code != 200 || fork.Total != 2 || len(fork.Dropped) != 1 {
		t.Fatalf("the copy's revisions = %d %+v; want the same two, with the dropped item", code, fork)
	}
}

// TestPlainPlanRevisionsOnOtherWires: a plain plan's dropped item reaches
// an AG-UI client as a state delta of the shared state's plan_revisions,
// and the LangGraph dialect's thread values carry the same revisions.
func TestPlainPlanRevisionsOnOtherWires(t *testing.T) {
	base := apptest.New(t, plainDriftApp(t), droppingModel(), apptest.Options{}).Serve(t)
	body := `{"threadId":"w1","runId":"r1","state":null,"messages":[{"id":"m1","role":"user","content":"go"}],"tools":[],"context":[],"forwardedProps":{}}`
	raw, ops := apptest.AGUIStateDeltas(t, base+"/agui/job", body, true) // the live deltas of the tool calls
	found := false
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/plan_revisions/dropped") && strings.Contains(string(op.Value), "Write the tests") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no AG-UI STATE_DELTA of the tool calls adds the dropped item to the shared plan_revisions:\n%s", raw)
	}
	var st struct {
		Values struct {
			Revisions struct {
				plandiff.Log
			} `json:"plan_revisions"`
		} `json:"values"`
	}
	if code := apptest.GetJSON(t, base+"/threads/w1/state", &st); code != 200 {
		t.Fatalf("GET state = %d", code)
	}
	if l := st.Values.Revisions; l.RevisionN != 2 || len(l.Dropped) != 1 || l.Dropped[0].Content != "Write the tests" {
		t.Fatalf("thread values' plan_revisions = %+v, want two revisions and the dropped item", l)
	}
}

// TestPlainPlanDriftEval: dawn eval's runner, on a case that expects
// no_dropped_items of a plain plan whose model drops an item, fails the
// case on that expectation and names the item. It reads the plan's
// revisions: an item reworded in place is no drop, though its old text is
// gone from the list.
func TestPlainPlanDriftEval(t *testing.T) {
	reword := dawntest.Script().
		CallTool("writeTodos", plainTodos([2]string{"Write the code", "in_progress"}, [2]string{"Write the tests", "pending"}, [2]string{"Write the docs", "pending"})).
		CallTool("writeTodos", plainTodos([2]string{"Write the code", "in_progress"}, [2]string{"Write the unit tests", "pending"}, [2]string{"Write the docs", "pending"})).
		Reply("Done.")
	kept := apptest.New(t, plainDriftApp(t), reword, apptest.Options{})
	cases, err := eval.Parse("job/evals/drift.yaml", "/job", []byte("cases:\n  - name: rewords\n    input: {message: do it}\n    expect: {no_dropped_items: true, max_revisions: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if report := eval.Run(context.Background(), kept.Runs, cases, eval.Options{}); report.Passed != 1 {
		t.Fatalf("a reworded item: %s; want the case passing", strings.Join(report.Below(1), "\n"))
	}

	h := apptest.New(t, plainDriftApp(t), droppingModel(), apptest.Options{})
	cases, err = eval.Parse("job/evals/drift.yaml", "/job", []byte("cases:\n  - name: keeps its plan\n    input: {message: do it}\n    expect: {no_dropped_items: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	report := eval.Run(context.Background(), h.Runs, cases, eval.Options{})
	below := strings.Join(report.Below(1), "\n")
	if report.Passed != 0 || !strings.Contains(below, eval.ExpectNoDroppedItems) || !strings.Contains(below, "Write the tests") {
		t.Fatalf("report: %d passed; below: %s; want the case failing no_dropped_items on the tests item", report.Passed, below)
	}
}
