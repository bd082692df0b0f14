package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
)

const diamond = "Here is the plan:\n```json\n" + `{"goal":"Answer with checked facts","steps":[
 {"id":"E1","task":"Collect the facts"},
 {"id":"E2","task":"Summarize: #E1.summary","deps":["E1"]},
 {"id":"E3","task":"Check the start: #E1.head=4","deps":["E1"]},
 {"id":"E4","task":"Combine #E2 with #E3 (tail #E1.last=3)","deps":["E2","E3"]}]}` + "\n```\nDone."

func planFirstBody(route, message, mode string) string {
	b, _ := json.Marshal(map[string]any{"route": route, "plan_first": mode, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(b)
}

func TestPlanFirstDiamondOverHTTP(t *testing.T) {
	model := dawntest.Script().
		Reply(diamond).                  // the planner
		Reply("fact one\nand fact two"). // E1
		Reply("two facts").              // E2
		Reply("looks right").            // E3
		Reply("all combined").           // E4
		Reply("Final answer from the report.")
	// One step at a time: the scripted model answers in call order, and
	// this test checks each step's task and the plan after each step.
	// planfirst's own tests cover steps running in parallel.
	h := apptest.New(t, enforcedApp(t, "parallel: 1\n", 2), model, apptest.Options{})
	url := h.Serve(t)
	events := readSSE(t, post(t, url+"/threads/pf/runs/stream", planFirstBody("/job", "Collect the facts, then summarize and check them, then combine.", "always")))

	reqs := model.Requests()
	wantTasks := []string{
		"Collect the facts",
		"Summarize: fact one",
		"Check the start: fact…",
		"Combine two facts with looks right (tail …two)",
	}
	for i, want := range wantTasks {
		if got := lastUser(reqs[i+1]); got != want {
			t.Errorf("step %d ran with %q, want %q", i+1, got, want)
		}
	}
	// plan_update per step: the planned plan with E1 started, then one per
	// finished step, which also starts the next.
	updates := dawntest.PlanUpdates(t, events, "plan_update")
	if len(updates) < 5 {
		t.Fatalf("%d plan_update events, want 5 or more: %v", len(updates), dawntest.Types(events))
	}
	if updates[0][0].Status != "in_progress" {
		t.Errorf("first update: E1 is %s", updates[0][0].Status)
	}
	for i := range 4 {
		u := updates[1+i]
		if u[i].Status != "completed" || (i < 3 && u[i+1].Status != "in_progress") {
			t.Errorf("update %d = %+v", 1+i, u)
		}
	}
	last := updates[4]
	for i, td := range last {
		if td.Status != "completed" || !strings.HasPrefix(td.Content, fmt.Sprintf("E%d: ", i+1)) {
			t.Fatalf("final plan = %+v", last)
		}
	}
	// Step events reach the stream as subagent events tagged with the step.
	var sub struct {
		CallID  string `json:"call_id"`
		RouteID string `json:"route_id"`
	}
	for _, e := range events {
		if e.Type == "subagent.message" {
			_ = json.Unmarshal(e.Data, &sub)
			break
		}
	}
	if sub.CallID != "E1" || sub.RouteID != "/job" {
		t.Fatalf("subagent chunk identity = %+v", sub)
	}
	var st struct {
		Values struct {
			Plan     harness.Plan `json:"plan"`
			Messages []struct {
				Role, Content string
				Harness       bool
			} `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/pf/state", &st)
	if st.Values.Plan.State != harness.Done || st.Values.Plan.Goal != "Answer with checked facts" {
		t.Fatalf("plan = %+v", st.Values.Plan)
	}
	msgs := st.Values.Messages
	if len(msgs) != 4 || !msgs[1].Harness || !msgs[2].Harness || msgs[2].Role != "user" || !strings.Contains(msgs[2].Content, "all combined") || msgs[3].Content != "Final answer from the report." {
		t.Fatalf("messages = %+v", msgs)
	}
}

func TestPlanFirstPreviewAndFailures(t *testing.T) {
	t.Run("preview", func(t *testing.T) {
		model := dawntest.Script().Reply(diamond)
		h := apptest.New(t, enforcedApp(t, "", 2), model, apptest.Options{})
		resp := post(t, h.Serve(t)+"/threads/pv/runs/wait", planFirstBody("/job", "x", "preview"))
		var out struct {
			Preview struct {
				Order []string `json:"order"`
			} `json:"preview"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Join(out.Preview.Order, ",") != "E1,E2,E3,E4" || model.Calls() != 1 {
			t.Fatalf("preview: %d %+v after %d calls", resp.StatusCode, out, model.Calls())
		}
	})
	t.Run("a failed step does not stop the rest", func(t *testing.T) {
		model := dawntest.Script().Reply(diamond).Fail(fmt.Errorf("tool outage")).Reply("b").Reply("c").Reply("d").Reply("answer")
		h := apptest.New(t, enforcedApp(t, "", 2), model, apptest.Options{})
		url := h.Serve(t)
		resp := post(t, url+"/threads/ff2/runs/wait", planFirstBody("/job", "x", "always"))
		resp.Body.Close()
		var runs []struct {
			Output struct {
				PlanFirst struct {
					HadErrors bool `json:"had_errors"`
					Steps     int  `json:"steps"`
				} `json:"plan_first"`
			} `json:"output"`
		}
		getJSON(t, url+"/threads/ff2/runs", &runs)
		if len(runs) != 1 || !runs[0].Output.PlanFirst.HadErrors || runs[0].Output.PlanFirst.Steps != 4 {
			t.Fatalf("run record = %+v", runs)
		}
	})
	t.Run("invalid twice", func(t *testing.T) {
		model := dawntest.Script().Reply("no plan here").Reply(`{"steps":[{"id":"E1","task":"x","deps":["E9"]}]}`)
		h := apptest.New(t, enforcedApp(t, "", 2), model, apptest.Options{})
		resp := post(t, h.Serve(t)+"/threads/iv/runs/wait", planFirstBody("/job", "x", "always"))
		e := decodeErr(t, resp)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(e.Error.Message, "still invalid after one correction") || !strings.Contains(e.Error.Message, "E9") {
			t.Fatalf("%d %+v", resp.StatusCode, e)
		}
		if !strings.Contains(lastUser(model.Requests()[1]), "no JSON plan found") {
			t.Fatalf("the model was not told what was wrong: %q", lastUser(model.Requests()[1]))
		}
	})
	t.Run("only on harness routes", func(t *testing.T) {
		h := apptest.New(t, enforcedApp(t, "", 2), dawntest.Script(), apptest.Options{})
		resp := post(t, h.Serve(t)+"/threads/o/runs/wait", planFirstBody("/open", "x", "always"))
		if e := decodeErr(t, resp); resp.StatusCode != 400 || !strings.Contains(e.Error.Message, "enforce: true") {
			t.Fatalf("%d %+v", resp.StatusCode, e)
		}
	})
}

func TestPlanFirstAutoTrigger(t *testing.T) {
	cases := []struct {
		task    string
		planned bool
	}{
		{"What is our refund policy?", false},
		{"Fix the bug in server/runs.go, then add a test in server/runs_test.go, then update README.md and finally deploy it.", true},
	}
	for _, tc := range cases {
		model := dawntest.Script().Reply(`{"steps":[{"id":"E1","task":"do it"}]}`).Reply("step done").Reply("answer").Reply("answer")
		h := apptest.New(t, enforcedApp(t, "mode: auto\n", 1), model, apptest.Options{})
		resp := post(t, h.Serve(t)+"/threads/auto/runs/wait", runBody("/job", tc.task))
		resp.Body.Close()
		planned := strings.Contains(lastUser(model.Requests()[0]), "JSON")
		if planned != tc.planned {
			t.Errorf("%q: planned = %v, want %v (status %d)", tc.task, planned, tc.planned, resp.StatusCode)
		}
	}
}

var lastUser = apptest.LastUser
