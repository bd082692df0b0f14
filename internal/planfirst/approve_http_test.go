package planfirst_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// These tests drive plan-first plans a person approves over real HTTP, on
// a SQLite file, with a scripted model whose calls they count.

// threePlan is the planner's answer: three steps, E2 and E3 after E1.
const threePlan = "```json\n" + `{"goal":"Ship it","steps":[
 {"id":"E1","task":"Build the release"},
 {"id":"E2","task":"Test #E1.summary","deps":["E1"]},
 {"id":"E3","task":"Deploy after #E2","deps":["E2"]}]}` + "\n```"

// jobApp is a route whose plan the harness owns, with a subagent, one step
// at a time so the scripted model answers in step order. front is added to
// plan.md's front matter.
func jobApp(t *testing.T, front string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"job/agent.md":                   "You do the job.",
		"job/plan.md":                    "---\nenforce: true\nparallel: 1\n" + front + "---\n- [ ] Do the job\n",
		"job/subagents/checker/agent.md": "You check things.",
		"other/agent.md":                 "Another route.",
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serve runs the app on the SQLite file db with model and returns its URL
// and harness.
func serve(t *testing.T, dir, db string, model llms.Model) (string, *apptest.Harness) {
	t.Helper()
	h := apptest.New(t, dir, model, apptest.Options{StorePath: db})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL, h
}

var post = apptest.PostJSON

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return string(data)
}

// readSSE reads an SSE response to its end.
var readSSE = apptest.ReadSSE

func runBody(mode, message string) string {
	b, _ := json.Marshal(map[string]any{"route": "/job", "plan_first": mode, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(b)
}

func resumeBody(id, payload string) string {
	return fmt.Sprintf(`{"route":"/job","resume":[{"interruptId":%q,"status":"resolved","payload":%s}]}`, id, payload)
}

type step struct {
	ID       string   `json:"id"`
	Task     string   `json:"task"`
	Deps     []string `json:"deps"`
	Subagent string   `json:"subagent"`
}

type planInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		Plan struct {
			Goal  string `json:"goal"`
			Steps []step `json:"steps"`
		} `json:"plan"`
		Order []string `json:"order"`
	} `json:"detail"`
}

type threadState struct {
	Status     string          `json:"status"`
	Interrupts []planInterrupt `json:"interrupts"`
	Values     struct {
		Plan struct {
			State    string `json:"state"`
			Approved bool   `json:"approved"`
			Items    []struct {
				Content, Status string
			} `json:"items"`
		} `json:"plan"`
		Messages []struct {
			Role, Content string
			Harness       bool
		} `json:"messages"`
	} `json:"values"`
}

func stateOf(t *testing.T, url, thread string) (threadState, string) {
	t.Helper()
	raw := get(t, url+"/threads/"+thread+"/state")
	var st threadState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatalf("state: %v in %s", err, raw)
	}
	return st, raw
}

// previewOverStream previews on thread over runs/stream and checks the run
// parked on a plan interrupt carrying the DAG: plan_preview, interrupt,
// done saying it is interrupted, the thread interrupted and listing it.
func previewOverStream(t *testing.T, url, thread string) planInterrupt {
	t.Helper()
	events := readSSE(t, post(t, url+"/threads/"+thread+"/runs/stream", runBody("preview", "Ship release 1.4")))
	if got := strings.Join(dawntest.Types(events), ","); got != "plan_preview,interrupt,done" {
		t.Fatalf("events of a preview: %s", got)
	}
	var in planInterrupt
	if err := json.Unmarshal(events[1].Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "permission-request" || in.Kind != "plan" || !strings.HasPrefix(in.ID, "plan-") ||
		strings.Join(in.Detail.Order, ",") != "E1,E2,E3" || len(in.Detail.Plan.Steps) != 3 ||
		strings.Join(in.Detail.Plan.Steps[2].Deps, ",") != "E2" || in.Detail.Plan.Goal != "Ship it" {
		t.Fatalf("plan interrupt: %s", events[1].Data)
	}
	var preview struct {
		InterruptID string   `json:"interruptId"`
		Order       []string `json:"order"`
	}
	if err := json.Unmarshal(events[0].Data, &preview); err != nil || preview.InterruptID != in.ID || len(preview.Order) != 3 {
		t.Fatalf("plan_preview: %s", events[0].Data)
	}
	var done struct {
		Output struct {
			Interrupted bool            `json:"interrupted"`
			Interrupts  []planInterrupt `json:"interrupts"`
			Preview     struct {
				InterruptID string `json:"interruptId"`
			} `json:"preview"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[2].Data, &done); err != nil || !done.Output.Interrupted || len(done.Output.Interrupts) != 1 || done.Output.Interrupts[0].ID != in.ID || done.Output.Preview.InterruptID != in.ID {
		t.Fatalf("done of a preview: %s", events[2].Data)
	}
	st, raw := stateOf(t, url, thread)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID || len(st.Interrupts[0].Detail.Plan.Steps) != 3 {
		t.Fatalf("state of a parked preview: %s", raw)
	}
	if st.Values.Plan.State == "running" && strings.HasPrefix(st.Values.Plan.Items[0].Content, "E1") {
		t.Fatalf("the preview started the plan: %s", raw)
	}
	return in
}

// ranTasks returns the last user message of each model request from first
// on: the step tasks, then the report the answer is written from.
func ranTasks(model *dawntest.ScriptedModel, first int) []string {
	var out []string
	for _, req := range model.Requests()[first:] {
		for i := len(req) - 1; i >= 0; i-- {
			if req[i].Role == llms.ChatMessageTypeHuman {
				out = append(out, fmt.Sprint(req[i].Parts[0]))
				break
			}
		}
	}
	return out
}

// TestPreviewApproveRunsParkedPlan: a preview parks on its plan; "approve"
// runs exactly that plan, step by step, without asking the planner again
// (the model is called once to plan, once per step and once to answer).
func TestPreviewApproveRunsParkedPlan(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("tests pass").Reply("deployed").Reply("Shipped 1.4.")
	url, _ := serve(t, jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := previewOverStream(t, url, "t1")
	if model.Calls() != 1 {
		t.Fatalf("the preview called the model %d times, want 1 (the planner)", model.Calls())
	}
	// A new message on the parked thread is refused: only a resume goes on.
	resp := post(t, url+"/threads/t1/runs/wait", runBody("", "something else"))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 409 || !strings.Contains(string(data), "interrupt_pending") {
		t.Fatalf("a new message on the parked thread: %d %s", resp.StatusCode, data)
	}

	events := readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"approve"`)))
	types := strings.Join(dawntest.Types(events), ",")
	if strings.Contains(types, "interrupt") || strings.Contains(types, "plan_preview") || !strings.Contains(types, "step_started") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after approve: %s", types)
	}
	if model.Calls() != 5 {
		t.Fatalf("model calls after approve = %d, want 5: planner once, 3 steps, the answer", model.Calls())
	}
	tasks := ranTasks(model, 1)
	want := []string{"Build the release", "Test built v1.4", "Deploy after tests pass"}
	for i, w := range want {
		if tasks[i] != w {
			t.Fatalf("step %d ran %q, want %q (all: %q)", i+1, tasks[i], w, tasks)
		}
	}
	st, raw := stateOf(t, url, "t1")
	if st.Status != "idle" || len(st.Interrupts) != 0 || st.Values.Plan.State != "done" || len(st.Values.Plan.Items) != 3 || strings.Contains(raw, "__strategy") || strings.Contains(raw, "__interrupts") {
		t.Fatalf("state after approve: %s", raw)
	}
	msgs := st.Values.Messages
	if len(msgs) != 4 || msgs[0].Content != "Ship release 1.4" || msgs[3].Content != "Shipped 1.4." {
		t.Fatalf("messages after approve: %+v", msgs)
	}
	var runs []struct {
		Status string `json:"status"`
		Output struct {
			PlanFirst struct {
				Decision string `json:"decision"`
				Steps    int    `json:"steps"`
			} `json:"plan_first"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(get(t, url+"/threads/t1/runs")), &runs); err != nil || len(runs) != 2 || runs[0].Status != "success" || runs[0].Output.PlanFirst.Decision != "approve" || runs[0].Output.PlanFirst.Steps != 3 || runs[1].Status != "interrupted" {
		t.Fatalf("runs: %+v (%v)", runs, err)
	}
}

// TestPreviewWaitListsInterrupt: runs/wait answers a preview with the shape
// it always had ({"preview":{"plan","order"}}), the interrupt's id in it
// and the pending interrupts beside it.
func TestPreviewWaitListsInterrupt(t *testing.T) {
	model := dawntest.Script().Reply(threePlan)
	url, _ := serve(t, jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db"), model)
	resp := post(t, url+"/threads/w1/runs/wait", runBody("preview", "Ship release 1.4"))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct {
		Preview struct {
			Plan struct {
				Steps []step `json:"steps"`
			} `json:"plan"`
			Order       []string `json:"order"`
			InterruptID string   `json:"interruptId"`
		} `json:"preview"`
		Interrupts []planInterrupt `json:"__interrupts"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(data, &out) != nil || strings.Join(out.Preview.Order, ",") != "E1,E2,E3" ||
		len(out.Preview.Plan.Steps) != 3 || len(out.Interrupts) != 1 || out.Interrupts[0].ID != out.Preview.InterruptID || out.Interrupts[0].Kind != "plan" {
		t.Fatalf("runs/wait of a preview: %d %s", resp.StatusCode, data)
	}
	if st, raw := stateOf(t, url, "w1"); st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != out.Preview.InterruptID {
		t.Fatalf("state: %s", raw)
	}
}

// TestPreviewEditRunsEditedPlan: an edit replaces the parked plan, which
// runs instead, on the subagent it names.
func TestPreviewEditRunsEditedPlan(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("checked").Reply("fixed it").Reply("Done, edited.")
	url, _ := serve(t, jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := previewOverStream(t, url, "t1")
	edit := `{"decision":"edit","plan":{"goal":"Check first","steps":[{"id":"C1","task":"Check the release","subagent":"checker"},{"id":"C2","task":"Fix #C1"}]}}`
	events := readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, edit)))
	if types := strings.Join(dawntest.Types(events), ","); strings.Contains(types, "interrupt") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after the edit: %s", types)
	}
	if tasks := ranTasks(model, 1); model.Calls() != 4 || tasks[0] != "Check the release" || tasks[1] != "Fix checked" {
		t.Fatalf("after the edit: %d calls, tasks %q", model.Calls(), tasks)
	}
	var sub struct {
		Name string `json:"subagent"`
	}
	for _, e := range events {
		if strings.HasPrefix(e.Type, "subagent.") {
			_ = json.Unmarshal(e.Data, &sub)
			break
		}
	}
	if sub.Name != "checker" {
		t.Fatalf("the edited step C1 did not run on the checker subagent: %+v", sub)
	}
	st, raw := stateOf(t, url, "t1")
	if st.Status != "idle" || st.Values.Plan.State != "done" || len(st.Values.Plan.Items) != 2 || !strings.HasPrefix(st.Values.Plan.Items[0].Content, "C1: ") {
		t.Fatalf("state after the edit: %s", raw)
	}
}

// TestPreviewRejectRunsNothing: "reject" ends the run with the plan
// recorded as rejected and no step run; so does a cancelled answer.
func TestPreviewRejectRunsNothing(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"reject", `{"interruptId":%q,"status":"resolved","payload":"reject"}`},
		{"cancelled", `{"interruptId":%q,"status":"cancelled"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := dawntest.Script().Reply(threePlan).Reply("must not be asked")
			url, _ := serve(t, jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db"), model)
			in := previewOverStream(t, url, "t1")
			_, before := stateOf(t, url, "t1")
			events := readSSE(t, post(t, url+"/threads/t1/resume", `{"route":"/job","resume":[`+fmt.Sprintf(tc.answer, in.ID)+`]}`))
			if got := strings.Join(dawntest.Types(events), ","); got != "plan_rejected,done" {
				t.Fatalf("events after reject: %s", got)
			}
			if model.Calls() != 1 {
				t.Fatalf("the model was called %d times, want 1 (the planner): a rejected plan runs nothing", model.Calls())
			}
			st, raw := stateOf(t, url, "t1")
			msgs := st.Values.Messages
			if st.Status != "idle" || len(st.Interrupts) != 0 || len(msgs) != 2 || !msgs[1].Harness || !strings.Contains(msgs[1].Content, "rejected") || !strings.Contains(msgs[1].Content, `"E3"`) {
				t.Fatalf("state after reject: %s", raw)
			}
			// The route's own plan is as it was: no step of the rejected plan.
			var b, a struct {
				Values struct {
					Plan json.RawMessage `json:"plan"`
				} `json:"values"`
			}
			_ = json.Unmarshal([]byte(before), &b)
			_ = json.Unmarshal([]byte(raw), &a)
			if string(a.Values.Plan) != string(b.Values.Plan) {
				t.Fatalf("the plan changed on reject:\nbefore %s\nafter  %s", b.Values.Plan, a.Values.Plan)
			}
			var runs []struct {
				Status string `json:"status"`
				Output struct {
					Stopped   string `json:"stopped"`
					PlanFirst struct {
						Rejected bool `json:"rejected"`
						Plan     struct {
							Steps []step `json:"steps"`
						} `json:"plan"`
					} `json:"plan_first"`
				} `json:"output"`
			}
			if err := json.Unmarshal([]byte(get(t, url+"/threads/t1/runs")), &runs); err != nil || runs[0].Status != "success" || runs[0].Output.Stopped != "plan_rejected" || !runs[0].Output.PlanFirst.Rejected || len(runs[0].Output.PlanFirst.Plan.Steps) != 3 {
				t.Fatalf("record of the rejecting run: %+v (%v)", runs, err)
			}
		})
	}
}

// TestPreviewBadResumeChangesNothing: a bad edit or a bad resume body is a
// 400 naming the problem, and the thread stays byte for byte as it was;
// the plan can still be approved afterwards.
func TestPreviewBadResumeChangesNothing(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built").Reply("tested").Reply("deployed").Reply("Shipped.")
	url, _ := serve(t, jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := previewOverStream(t, url, "t1")
	_, before := stateOf(t, url, "t1")
	runsBefore := get(t, url+"/threads/t1/runs")
	edit := func(plan string) string { return resumeBody(in.ID, `{"decision":"edit","plan":`+plan+`}`) }
	cases := []struct{ name, body, want string }{
		{"later dep", edit(`{"steps":[{"id":"A","task":"a","deps":["B"]},{"id":"B","task":"b"}]}`), `deps names \"B\", which is not an earlier step`},
		{"unknown subagent", edit(`{"steps":[{"id":"A","task":"a","subagent":"ghost"}]}`), `subagent \"ghost\" does not exist; use one of: checker`},
		{"unknown route", edit(`{"steps":[{"id":"A","task":"a","route":"/nowhere"}]}`), `route \"/nowhere\" does not exist; use one of: /other`},
		{"placeholder ahead", edit(`{"steps":[{"id":"A","task":"use #B"},{"id":"B","task":"b"}]}`), `references #B, which is not declared before it`},
		{"no steps", edit(`{"steps":[]}`), `no steps`},
		{"unknown plan field", edit(`{"steps":[{"id":"A","task":"a","dep":["X"]}]}`), `unknown field \"dep\"`},
		{"no plan", resumeBody(in.ID, `{"decision":"edit"}`), `the edit has no plan`},
		{"todos instead of plan", resumeBody(in.ID, `{"decision":"edit","todos":[]}`), `a plan answer must be`},
		{"unknown word", resumeBody(in.ID, `"yes"`), `unknown plan decision \"yes\"`},
		{"unknown id", resumeBody("plan-nope", `"approve"`), `interrupt \"plan-nope\" is not pending`},
		{"missing id", `{"route":"/job","resume":[]}`, `missing: ` + in.ID},
		{"twice", fmt.Sprintf(`{"route":"/job","resume":[{"interruptId":%q,"status":"resolved","payload":"approve"},{"interruptId":%q,"status":"resolved","payload":"approve"}]}`, in.ID, in.ID), `answered twice`},
		{"no payload", fmt.Sprintf(`{"route":"/job","resume":[{"interruptId":%q,"status":"resolved"}]}`, in.ID), `needs a payload`},
		{"other route", fmt.Sprintf(`{"route":"/other","resume":[{"interruptId":%q,"status":"resolved","payload":"approve"}]}`, in.ID), `parked on route /job`},
	}
	for _, tc := range cases {
		resp := post(t, url+"/threads/t1/resume", tc.body)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(data), "invalid_resume") || !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: %d %s, want 400 invalid_resume with %s", tc.name, resp.StatusCode, data, tc.want)
		}
		if _, after := stateOf(t, url, "t1"); after != before {
			t.Fatalf("%s changed the thread:\nbefore %s\nafter  %s", tc.name, before, after)
		}
		if after := get(t, url+"/threads/t1/runs"); after != runsBefore {
			t.Fatalf("%s recorded a run:\nbefore %s\nafter  %s", tc.name, runsBefore, after)
		}
	}
	if model.Calls() != 1 {
		t.Fatalf("bad resumes called the model: %d calls", model.Calls())
	}
	readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"approve"`)))
	if st, raw := stateOf(t, url, "t1"); st.Status != "idle" || st.Values.Plan.State != "done" || model.Calls() != 5 {
		t.Fatalf("approve after the bad resumes: %d calls, %s", model.Calls(), raw)
	}
}

// TestPreviewResumedAfterRestart: the plan parks on one server; a new
// server on the same SQLite file, with a model that was never asked to
// plan, approves and runs it.
func TestPreviewResumedAfterRestart(t *testing.T) {
	dir, db := jobApp(t, ""), filepath.Join(t.TempDir(), "dawn.db")
	first := dawntest.Script().Reply(threePlan)
	url1, h1 := serve(t, dir, db, first)
	in := previewOverStream(t, url1, "t1")
	h1.Runs.Shutdown(context.Background())
	if err := h1.Store.Close(); err != nil {
		t.Fatal(err)
	}

	second := dawntest.Script().Reply("built").Reply("tested").Reply("deployed").Reply("Shipped after a restart.")
	url2, _ := serve(t, dir, db, second)
	if st, raw := stateOf(t, url2, "t1"); st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state after the restart: %s", raw)
	}
	events := readSSE(t, post(t, url2+"/threads/t1/resume", resumeBody(in.ID, `"approve"`)))
	if types := strings.Join(dawntest.Types(events), ","); strings.Contains(types, "interrupt") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after the restart: %s", types)
	}
	if tasks := ranTasks(second, 0); second.Calls() != 4 || tasks[0] != "Build the release" || tasks[2] != "Deploy after tested" {
		t.Fatalf("after the restart: %d calls (want 4: 3 steps and the answer, no planner), tasks %q", second.Calls(), tasks)
	}
	if st, raw := stateOf(t, url2, "t1"); st.Status != "idle" || st.Values.Plan.State != "done" || st.Values.Messages[len(st.Values.Messages)-1].Content != "Shipped after a restart." {
		t.Fatalf("state after the resume: %s", raw)
	}
}

// TestApprovalRequiredParksPlanFirst: with approval: required and mode:
// always in plan.md, an ordinary run plans and parks before any step runs;
// approving runs the plan, which then counts as approved.
func TestApprovalRequiredParksPlanFirst(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built").Reply("tested").Reply("deployed").Reply("Shipped.")
	url, _ := serve(t, jobApp(t, "approval: required\nmode: always\n"), filepath.Join(t.TempDir(), "dawn.db"), model)
	events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("", "Ship release 1.4")))
	if got := strings.Join(dawntest.Types(events), ","); got != "interrupt,done" {
		t.Fatalf("events of a plan waiting for approval: %s", got)
	}
	var in planInterrupt
	if err := json.Unmarshal(events[0].Data, &in); err != nil || in.Kind != "plan" || len(in.Detail.Plan.Steps) != 3 || strings.Join(in.Detail.Order, ",") != "E1,E2,E3" {
		t.Fatalf("interrupt: %s", events[0].Data)
	}
	st, raw := stateOf(t, url, "t1")
	if st.Status != "interrupted" || model.Calls() != 1 || len(st.Values.Plan.Items) != 1 || st.Values.Plan.Items[0].Content != "Do the job" || st.Values.Plan.Approved {
		t.Fatalf("parked before any step (%d model calls): %s", model.Calls(), raw)
	}
	readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"approve"`)))
	st, raw = stateOf(t, url, "t1")
	if st.Status != "idle" || model.Calls() != 5 || st.Values.Plan.State != "done" || !st.Values.Plan.Approved || len(st.Values.Plan.Items) != 3 {
		t.Fatalf("after approve (%d model calls): %s", model.Calls(), raw)
	}
}
