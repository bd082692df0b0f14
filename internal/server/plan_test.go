package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

type todoArg = map[string]string

// list builds a writeTodos argument for n "Step i" items: the first done
// completed (with evidence when ev), the next in progress.
func list(n, done int, ev bool) map[string]any {
	var todos []todoArg
	for i := 1; i <= n; i++ {
		t := todoArg{"content": fmt.Sprintf("Step %d", i), "status": "pending"}
		switch {
		case i <= done:
			t["status"] = "completed"
			if ev {
				t["evidence"] = fmt.Sprintf("checked step %d", i)
			}
		case i == done+1:
			t["status"] = "in_progress"
		}
		todos = append(todos, t)
	}
	return map[string]any{"todos": todos, "reason": fmt.Sprintf("finished %d", done)}
}

func planOf(t *testing.T, res *apptest.Result) harness.Plan {
	t.Helper()
	var p harness.Plan
	if err := json.Unmarshal(res.Values["plan"], &p); err != nil {
		t.Fatalf("plan: %v in %s", err, res.Values["plan"])
	}
	return p
}

func toolErrors(events []stream.Event) []string {
	var out []string
	for _, e := range events {
		var d struct{ Error string }
		if e.Type == stream.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Error != "" {
			out = append(out, d.Error)
		}
	}
	return out
}

func hasEvent(events []stream.Event, typ string) bool {
	for _, e := range events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestHarnessNormalizesInProgress(t *testing.T) {
	two := map[string]any{"todos": []todoArg{{"content": "Step 1", "status": "in_progress"}, {"content": "Step 2", "status": "in_progress"}}}
	model := dawntest.Script().CallTool("writeTodos", two).Reply("x").Reply("x")
	h := apptest.New(t, enforcedApp(t, "corrections: 1\n", 2), model, apptest.Options{})
	res := h.Run(t, "n", "/job", "go")
	p := planOf(t, res)
	if p.Items[0].Status != harness.InProgress || p.Items[1].Status != harness.Pending {
		t.Fatalf("items = %+v", p.Items)
	}
	if !strings.Contains(p.Revisions[len(p.Revisions)-2].Change+p.Revisions[len(p.Revisions)-1].Change+fmt.Sprint(p.Revisions), "1 extra in_progress demoted to pending") {
		t.Fatalf("revisions = %+v", p.Revisions)
	}
	// plan_update keeps Dawn's todos and adds the lifecycle fields.
	var upd struct {
		Todos []struct{ Content, Status, ID string } `json:"todos"`
		State string                                 `json:"state"`
	}
	for _, e := range res.Events {
		if e.Type == "plan_update" {
			_ = json.Unmarshal(e.Data, &upd)
		}
	}
	if upd.State == "" || len(upd.Todos) != 2 || upd.Todos[0].ID == "" {
		t.Fatalf("plan_update = %+v", upd)
	}
}

func TestHarnessRefusesCompletionWithoutEvidence(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", list(2, 1, false)).
		CallTool("writeTodos", list(2, 2, true)).
		Reply("done")
	h := apptest.New(t, enforcedApp(t, "evidence: required\n", 2), model, apptest.Options{})
	res := h.Run(t, "e", "/job", "go")
	errs := toolErrors(res.Events)
	if len(errs) != 1 || !strings.Contains(errs[0], `todos[0] "Step 1" is marked completed without evidence. Evidence is a short, checkable record`) {
		t.Fatalf("tool errors = %q", errs)
	}
	p := planOf(t, res)
	if p.State != harness.Done || p.Items[0].Evidence != "checked step 1" {
		t.Fatalf("plan = %+v", p)
	}
	if !hasEvent(res.Events, "plan_done") {
		t.Fatalf("no plan_done in %v", dawntest.Types(res.Events))
	}
}

func TestHarnessGateRejectsPrematureAnswer(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", list(2, 1, false)).
		Reply("All done!"). // premature: step 2 and the postcondition are open
		CallTool("writeTodos", list(2, 2, false)).
		Reply("Now really done."). // the postcondition is still unverified
		CallTool("verifyPostcondition", map[string]any{"index": 0, "evidence": "customer replied thanks"}).
		Reply("Done, verified.")
	h := apptest.New(t, enforcedApp(t, "", 2, "The customer confirms"), model, apptest.Options{})
	res := h.Run(t, "g", "/job", "go")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	p := planOf(t, res)
	if p.State != harness.Done || !p.Postconditions[0].Verified {
		t.Fatalf("plan = %+v", p)
	}
	var msgs []thread.Message
	_ = json.Unmarshal(res.Values["messages"], &msgs)
	var corrections []string
	for _, m := range msgs {
		if harness.Marked(m) {
			corrections = append(corrections, m.Content)
		}
	}
	if len(corrections) != 2 || !strings.Contains(corrections[0], `item 2 "Step 2" is in_progress`) || !strings.Contains(corrections[1], `postcondition 0 "The customer confirms" is not verified`) {
		t.Fatalf("corrections = %q", corrections)
	}
	final := msgs[len(msgs)-1]
	if final.Content != "Done, verified." || harness.Snapshot(final) == nil {
		t.Fatalf("final message = %+v", final)
	}
}

func TestHarnessCorrectionLimitFailsThePlan(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", list(3, 1, false)).Reply("done").Reply("done").Reply("done")
	h := apptest.New(t, enforcedApp(t, "corrections: 2\n", 3), model, apptest.Options{})
	res := h.Run(t, "c", "/job", "go")
	p := planOf(t, res)
	if p.State != harness.Failed || !strings.Contains(p.Reason, "final answer 3 times while the plan was unfinished") {
		t.Fatalf("plan = %+v", p)
	}
	if !hasEvent(res.Events, "plan_failed") || model.Calls() != 4 {
		t.Fatalf("events %v, calls %d", dawntest.Types(res.Events), model.Calls())
	}
}

func TestHarnessRetryCapPauses(t *testing.T) {
	failing := dawntest.ToolCall{Name: "nope", Args: map[string]any{}}
	model := dawntest.Script().
		CallTool("writeTodos", list(2, 0, false)).
		CallTools(failing).CallTools(failing).
		Reply("unreachable")
	h := apptest.New(t, enforcedApp(t, "retry_cap: 2\n", 2), model, apptest.Options{})
	res := h.Run(t, "r", "/job", "go")
	p := planOf(t, res)
	if p.State != harness.Paused || p.PauseReason != harness.PauseRetryCap || p.Items[0].Attempts != 2 {
		t.Fatalf("plan = %+v", p)
	}
	errs := toolErrors(res.Events)
	if len(errs) != 2 || model.Calls() != 3 || !hasEvent(res.Events, "plan_paused") {
		t.Fatalf("errors %q calls %d events %v", errs, model.Calls(), dawntest.Types(res.Events))
	}
	var msgs []thread.Message
	_ = json.Unmarshal(res.Values["messages"], &msgs)
	if !strings.Contains(msgs[4].Content, "Plan harness: this is step 1/2, attempt 1/2") {
		t.Fatalf("first tool error lacks the harness note: %q", msgs[4].Content)
	}
}

func TestHarnessStepFailed(t *testing.T) {
	cases := []struct {
		next      string
		wantState harness.State
		wantItem  harness.Status
	}{
		{"retry", harness.Running, harness.InProgress},
		{"skip", harness.Running, harness.Skipped},
		{"abort", harness.Failed, harness.ItemFailed},
		{"revise", harness.Paused, harness.InProgress},
	}
	for _, tc := range cases {
		t.Run(tc.next, func(t *testing.T) {
			model := dawntest.Script().
				CallTool("writeTodos", list(3, 0, false)).
				CallTool("stepFailed", map[string]any{"next": tc.next, "reason": "the API is down"}).
				Reply("stopping here").Reply("stopping here")
			h := apptest.New(t, enforcedApp(t, "corrections: 1\n", 3), model, apptest.Options{})
			res := h.Run(t, "s", "/job", "go")
			p := planOf(t, res)
			if p.Items[0].Status != tc.wantItem {
				t.Fatalf("item 1 = %s, want %s", p.Items[0].Status, tc.wantItem)
			}
			switch tc.next {
			case "retry":
				if p.Items[0].Attempts != 1 {
					t.Fatalf("attempts = %d", p.Items[0].Attempts)
				}
			case "skip":
				if p.Items[1].Status != harness.InProgress {
					t.Fatalf("skip did not advance: %+v", p.Items)
				}
			case "revise":
				if p.PauseReason != harness.PauseRevise || model.Calls() != 2 {
					t.Fatalf("plan %+v calls %d", p, model.Calls())
				}
				return
			}
			if tc.next == "abort" && p.State != harness.Failed {
				t.Fatalf("state = %s", p.State)
			}
		})
	}
}

func TestHarnessBudgetPausesAndResumeContinues(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", list(4, 1, false)).
		CallTool("writeTodos", list(4, 2, false)). // budget of 2 spent: pause
		Reply("unreachable in run 1").
		// run 2, after the user speaks again:
		CallTool("writeTodos", list(4, 4, false)).
		Reply("finished")
	dir := enforcedApp(t, "budget: 2\n", 4)
	h := apptest.New(t, dir, model, apptest.Options{})
	url := h.Serve(t)
	res := h.Run(t, "b", "/job", "go")
	p := planOf(t, res)
	if p.State != harness.Paused || p.PauseReason != harness.PauseBudget || model.Calls() != 2 {
		t.Fatalf("plan %+v after %d calls", p, model.Calls())
	}
	if !hasEvent(res.Events, "plan_paused") {
		t.Fatal("no plan_paused event")
	}
	var view struct {
		State      string `json:"state"`
		BudgetLeft int    `json:"budget_left"`
	}
	getJSON(t, url+"/threads/b/plan", &view)
	if view.State != "paused" || view.BudgetLeft != 0 {
		t.Fatalf("GET plan = %+v", view)
	}
	resp := post(t, url+"/threads/b/plan/resume", "")
	_ = json.NewDecoder(resp.Body).Decode(&view)
	resp.Body.Close()
	if view.State != "running" || view.BudgetLeft != 2 {
		t.Fatalf("after resume: %d %+v", resp.StatusCode, view)
	}
	res2 := h.Run(t, "b", "/job", "continue")
	if p := planOf(t, res2); p.State != harness.Done {
		t.Fatalf("plan after resume = %+v", p)
	}
}

func TestHarnessSupervisorPauseAndCancelMidRun(t *testing.T) {
	for _, action := range []string{"pause", "cancel"} {
		t.Run(action, func(t *testing.T) {
			gate := make(chan struct{})
			model := dawntest.Script().
				CallTool("writeTodos", list(3, 0, false)).
				Wait(gate).CallTool("writeTodos", list(3, 1, false)).
				Reply("never")
			h := apptest.New(t, enforcedApp(t, "", 3), model, apptest.Options{})
			url := h.Serve(t)
			resp := post(t, url+"/threads/p/runs/stream", runBody("/job", "go"))
			done := make(chan []stream.Event)
			go func() { done <- readSSE(t, resp) }()
			waitFor(t, func() bool { return model.Calls() >= 2 })
			if action == "pause" {
				go func() { time.Sleep(20 * time.Millisecond); close(gate) }()
			}
			sr := post(t, url+"/threads/p/plan/"+action, "")
			var view struct {
				State, PauseReason string
				PendingSignal      string `json:"pending_signal"`
			}
			_ = json.NewDecoder(sr.Body).Decode(&view)
			sr.Body.Close()
			events := <-done
			want := map[string]string{"pause": "paused", "cancel": "cancelled"}[action]
			// A pause waits for the model call in progress; when the run has
			// not reached its next step boundary in time, the answer is 202
			// with the pause pending.
			pending := sr.StatusCode == http.StatusAccepted && action == "pause" && view.PendingSignal == "pause"
			if !pending && (sr.StatusCode != 200 || view.State != want) {
				t.Fatalf("%s: %d %+v", action, sr.StatusCode, view)
			}
			if !hasEvent(events, "plan_"+map[string]string{"pause": "paused", "cancel": "cancelled"}[action]) || events[len(events)-1].Type != "done" {
				t.Fatalf("events = %v", dawntest.Types(events))
			}
			// The saved plan agrees.
			var saved struct{ State string }
			getJSON(t, url+"/threads/p/plan", &saved)
			if saved.State != want {
				t.Fatalf("saved plan state = %s", saved.State)
			}
		})
	}
}

func TestPlanSnapshotSurvivesRestart(t *testing.T) {
	dir := enforcedApp(t, "", 1)
	db := filepath.Join(t.TempDir(), "dawn.db")
	model := dawntest.Script().CallTool("writeTodos", list(1, 1, false)).Reply("done")
	h := apptest.New(t, dir, model, apptest.Options{StorePath: db})
	h.Run(t, "snap", "/job", "go")
	h.Store.Close()
	h2 := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db})
	url := h2.Serve(t)
	var st struct {
		Values struct {
			Messages []thread.Message `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/snap/state", &st)
	last := st.Values.Messages[len(st.Values.Messages)-1]
	var p harness.Plan
	if err := json.Unmarshal(harness.Snapshot(last), &p); err != nil || p.State != harness.Done {
		t.Fatalf("final message plan = %s (%v)", harness.Snapshot(last), err)
	}
	var runs []struct {
		Output struct {
			Message int             `json:"message"`
			Plan    json.RawMessage `json:"plan"`
		} `json:"output"`
	}
	getJSON(t, url+"/threads/snap/runs", &runs)
	if len(runs) != 1 || runs[0].Output.Message != len(st.Values.Messages)-1 || runs[0].Output.Plan == nil {
		t.Fatalf("run record = %+v", runs)
	}
}

func TestPlanEndpointsErrors(t *testing.T) {
	h := apptest.New(t, enforcedApp(t, "", 1), dawntest.Script().CallTool("writeTodos", list(1, 1, false)).Reply("ok").Reply("ok"), apptest.Options{})
	url := h.Serve(t)
	h.Run(t, "done", "/job", "go")
	if resp := post(t, url+"/threads/done/plan/resume", ""); resp.StatusCode != http.StatusConflict || decodeErr(t, resp).Error.Kind != "plan_state" {
		t.Fatalf("resume a done plan: %d", resp.StatusCode)
	}
	h.Run(t, "open", "/open", "go")
	var e apiErr
	if code := getJSON(t, url+"/threads/open/plan", &e); code != 404 || e.Error.Kind != "plan_not_found" {
		t.Fatalf("plan of a route without the harness: %d %+v", code, e)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestOfflineModelFinishesAnEnforcedPlan(t *testing.T) {
	dir := enforcedApp(t, "evidence: required\ngoal: Onboard the customer\n", 3, "The customer has a login")
	h := apptest.New(t, dir, models.NewOffline(), apptest.Options{})
	res := h.Run(t, "off", "/job", "Onboard ACME")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	p := planOf(t, res)
	if p.State != harness.Done || !p.Postconditions[0].Verified || p.Items[2].Evidence == "" {
		t.Fatalf("plan = %+v", p)
	}
	if errs := toolErrors(res.Events); len(errs) != 0 {
		t.Fatalf("tool errors: %q", errs)
	}
}

var enforcedApp = apptest.EnforcedApp
