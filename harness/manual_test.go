package harness_test

import (
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
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// manualPlan is the plan.md of the release route: three steps, each
// waiting for a person once it is finished.
const manualPlan = "---\nenforce: true\nadvance: manual\n---\n- [ ] Build\n- [ ] Test\n- [ ] Deploy\n"

// releaseApp is an app whose /release route has manualPlan.
func releaseApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"release/agent.md": "You ship releases.", "release/plan.md": manualPlan} {
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

// serveRelease serves the release app on model over loopback HTTP, with its
// store in db, and returns the URL and the harness.
func serveRelease(t *testing.T, dir, db string, model llms.Model) (string, *apptest.Harness) {
	t.Helper()
	h := apptest.New(t, dir, model, apptest.Options{StorePath: db})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL, h
}

// todos is a writeTodos input with the statuses of Build, Test and Deploy.
func todos(build, test, deploy string) map[string]any {
	return map[string]any{"todos": []map[string]string{
		{"content": "Build", "status": build},
		{"content": "Test", "status": test},
		{"content": "Deploy", "status": deploy},
	}}
}

var post = apptest.PostJSON

// events reads an SSE response to its end.
var events = apptest.ReadSSE

type stepInterrupt struct {
	ID     string             `json:"interruptId"`
	Type   string             `json:"type"`
	Kind   string             `json:"kind"`
	CallID string             `json:"callId"`
	After  bool               `json:"after"`
	Detail harness.StepDetail `json:"detail"`
}

type releaseState struct {
	Status     string          `json:"status"`
	Interrupts []stepInterrupt `json:"interrupts"`
	Values     struct {
		Plan     harness.Plan    `json:"plan"`
		Messages json.RawMessage `json:"messages"`
	} `json:"values"`
	raw string
}

func stateOf(t *testing.T, url string) releaseState {
	t.Helper()
	resp, err := http.Get(url + "/threads/t1/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st releaseState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state: %v in %s", err, data)
	}
	st.raw = string(data)
	return st
}

// statuses is the plan's items as "Build=completed,…".
func statuses(p harness.Plan) string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Content+"="+string(it.Status))
	}
	return strings.Join(out, ",")
}

// parked checks that evs end with a step interrupt parking the run after
// finished, with next to come, and returns the interrupt.
func parked(t *testing.T, url string, evs []stream.Event, finished, next string) stepInterrupt {
	t.Helper()
	types := strings.ReplaceAll(strings.Join(dawntest.Types(evs), ","), ",plan_revised", "") // a revision that changed the list streams its diff
	if !strings.HasSuffix(types, "tool_call,tool_result,plan_update,plan_paused,interrupt,done") {
		t.Fatalf("events of a run parked on a step: %s", types)
	}
	var in stepInterrupt
	if err := json.Unmarshal(evs[len(evs)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	d := in.Detail
	if in.Type != "permission-request" || in.Kind != harness.StepKind || !strings.HasPrefix(in.ID, "step-") || !in.After || in.CallID == "" ||
		d.Finished.Content != finished || d.Finished.Status != harness.Completed || d.Next.Content != next || d.Next.Status != harness.Pending ||
		d.Plan.State != harness.Paused || strings.Join(d.Decisions, ",") != "continue,skip,revise,cancel" {
		t.Fatalf("step interrupt: %s", evs[len(evs)-2].Data)
	}
	var done struct {
		Output struct {
			Interrupted bool            `json:"interrupted"`
			Interrupts  []stepInterrupt `json:"interrupts"`
		} `json:"output"`
	}
	if err := json.Unmarshal(evs[len(evs)-1].Data, &done); err != nil || !done.Output.Interrupted || len(done.Output.Interrupts) != 1 || done.Output.Interrupts[0].ID != in.ID {
		t.Fatalf("done of a parked run: %s", evs[len(evs)-1].Data)
	}
	st := stateOf(t, url)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state of a thread parked on a step: %s", st.raw)
	}
	if p := st.Values.Plan; p.State != harness.Paused || p.PauseReason != harness.PauseManual {
		t.Fatalf("a plan waiting for a step decision must be paused (manual): %s", st.raw)
	}
	return in
}

func start(t *testing.T, url string) []stream.Event {
	t.Helper()
	return events(t, post(t, url+"/threads/t1/runs/stream", `{"route":"/release","input":{"messages":[{"role":"user","content":"ship 1.4.2"}]}}`))
}

func resumeBody(id, payload string) string {
	return fmt.Sprintf(`{"route":"/release","resume":[{"interruptId":%q,"status":"resolved","payload":%s}]}`, id, payload)
}

func resume(t *testing.T, url, id, payload string) []stream.Event {
	t.Helper()
	return events(t, post(t, url+"/threads/t1/resume", resumeBody(id, payload)))
}

// lastUserText is the text of the last user message the model got.
func lastUserText(model *dawntest.ScriptedModel) string {
	reqs := model.Requests()
	msgs := reqs[len(reqs)-1]
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman {
			if text, ok := msgs[i].Parts[0].(llms.TextContent); ok {
				return text.Text
			}
		}
	}
	return ""
}

// TestManualContinue: with advance: manual the run parks on a step
// interrupt after each finished step, with the next item still pending;
// "continue" starts the next item, tells the model, and the run goes on
// until the plan is done.
func TestManualContinue(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", todos("completed", "pending", "pending")).
		CallTool("writeTodos", todos("completed", "completed", "pending")).
		CallTool("writeTodos", todos("completed", "completed", "completed")).
		Reply("Released 1.4.2.")
	url, _ := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)

	in := parked(t, url, start(t, url), "Build", "Test")
	if p := stateOf(t, url).Values.Plan; statuses(p) != "Build=completed,Test=pending,Deploy=pending" {
		t.Fatalf("plan while parked: %s", statuses(p))
	}
	evs := resume(t, url, in.ID, `"continue"`)
	if types := dawntest.Types(evs); types[0] != "plan_update" {
		t.Fatalf("a continue must show the running plan first: %v", types)
	}
	if text := lastUserText(model); !strings.Contains(text, `go on with step 2/3 "Test"`) {
		t.Fatalf("the model was told %q", text)
	}
	in = parked(t, url, evs, "Test", "Deploy")
	evs = resume(t, url, in.ID, `"continue"`)
	if types := strings.Join(dawntest.Types(evs), ","); strings.Contains(types, "interrupt") || !strings.Contains(types, "plan_done") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events of the last step: %s", types)
	}
	st := stateOf(t, url)
	if st.Status != "idle" || st.Values.Plan.State != harness.Done || len(st.Interrupts) != 0 {
		t.Fatalf("state after the last step: %s", st.raw)
	}
}

// TestManualSkip: "skip" marks the next item skipped and goes on with the
// one after it.
func TestManualSkip(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", todos("completed", "pending", "pending")).
		CallTool("writeTodos", todos("completed", "skipped", "completed")).
		Reply("Released without tests.")
	url, _ := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := parked(t, url, start(t, url), "Build", "Test")
	evs := resume(t, url, in.ID, `"skip"`)
	if text := lastUserText(model); !strings.Contains(text, `skipped step 2/3 "Test": go on with step 3/3 "Deploy"`) {
		t.Fatalf("the model was told %q", text)
	}
	var first struct {
		Todos []harness.Item `json:"todos"`
	}
	if err := json.Unmarshal(evs[0].Data, &first); err != nil || evs[0].Type != "plan_update" || len(first.Todos) != 3 || first.Todos[1].Status != harness.Skipped || first.Todos[2].Status != harness.InProgress {
		t.Fatalf("first event after skip: %s %s", evs[0].Type, evs[0].Data)
	}
	st := stateOf(t, url)
	if st.Status != "idle" || st.Values.Plan.State != harness.Done || statuses(st.Values.Plan) != "Build=completed,Test=skipped,Deploy=completed" {
		t.Fatalf("state after skip: %s", st.raw)
	}
}

// TestManualRevise: "revise" gives the model the person's note and the
// plan back to rewrite; the note is kept as the reason of a revision.
func TestManualRevise(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", todos("completed", "pending", "pending")).
		CallTool("writeTodos", map[string]any{"reason": "the person asked for release notes", "todos": []map[string]string{
			{"content": "Build", "status": "completed"},
			{"content": "Write release notes", "status": "completed"},
			{"content": "Test", "status": "pending"},
			{"content": "Deploy", "status": "pending"},
		}}).
		Reply("unused")
	url, _ := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := parked(t, url, start(t, url), "Build", "Test")
	evs := resume(t, url, in.ID, `{"decision":"revise","note":"write release notes before testing"}`)
	text := lastUserText(model)
	if !strings.HasPrefix(text, harness.NotePrefix) || !strings.Contains(text, `revise the plan before going on: "write release notes before testing"`) {
		t.Fatalf("the model was told %q", text)
	}
	in = parked(t, url, evs, "Write release notes", "Test")
	st := stateOf(t, url)
	found := false
	for _, r := range st.Values.Plan.Revisions {
		found = found || (r.Source == "person" && r.Reason == "write release notes before testing")
	}
	if !found || statuses(st.Values.Plan) != "Build=completed,Write release notes=completed,Test=pending,Deploy=pending" {
		t.Fatalf("plan after the revision: %s", st.raw)
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content string          `json:"content"`
		Harness json.RawMessage `json:"harness"`
	}
	if err := json.Unmarshal(st.Values.Messages, &msgs); err != nil {
		t.Fatal(err)
	}
	marked := false
	for _, m := range msgs {
		marked = marked || (m.Role == "user" && strings.Contains(m.Content, "release notes before testing") && string(m.Harness) == "true")
	}
	if !marked {
		t.Fatalf("the note is not in the thread as the harness's message: %s", st.Values.Messages)
	}
	_ = in
}

// TestManualCancel: "cancel" cancels the plan and ends the run cleanly,
// without asking the model again.
func TestManualCancel(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", todos("completed", "pending", "pending")).Reply("never")
	url, h := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := parked(t, url, start(t, url), "Build", "Test")
	evs := resume(t, url, in.ID, `"cancel"`)
	if types := strings.Join(dawntest.Types(evs), ","); types != "plan_update,plan_cancelled,done" {
		t.Fatalf("events of a cancel: %s", types)
	}
	if strings.Contains(string(evs[len(evs)-1].Data), `"interrupted"`) || strings.Contains(string(evs[len(evs)-1].Data), `"error"`) {
		t.Fatalf("done of a cancel: %s", evs[len(evs)-1].Data)
	}
	if model.Calls() != 1 {
		t.Fatalf("the model was asked %d times; a cancel ends the run without it", model.Calls())
	}
	st := stateOf(t, url)
	if p := st.Values.Plan; st.Status != "idle" || p.State != harness.Cancelled || p.Reason == "" || statuses(p) != "Build=completed,Test=pending,Deploy=pending" {
		t.Fatalf("state after cancel: %s", st.raw)
	}
	runs, err := h.Store.Runs(t.Context(), "t1")
	if err != nil || len(runs) != 2 || !strings.Contains(string(runs[0].Output), `"stopped":"plan_cancelled"`) {
		t.Fatalf("the cancelled run's record: %+v (%v)", runs, err)
	}
}

// TestManualBadAnswers: an answer that is no step decision is a 400 naming
// it, and the thread stays parked byte for byte; so is the supervisor's
// resume and a new message. A good answer then still works.
func TestManualBadAnswers(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeTodos", todos("completed", "pending", "pending")).
		CallTool("writeTodos", todos("completed", "completed", "pending")).
		Reply("unused")
	url, _ := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := parked(t, url, start(t, url), "Build", "Test")
	before := stateOf(t, url).raw
	for _, tc := range []struct{ payload, want string }{
		{`"maybe"`, `unknown step decision \"maybe\"`},
		{`"revise"`, "revise needs the person's note"},
		{`{"decision":"revise"}`, "revise needs a note"},
		{`{"decision":"revise","note":"  "}`, "revise needs a note"},
		{`{"decision":"continue","note":"why"}`, `a note goes only with \"decision\":\"revise\"`},
		{`{"decision":"go"}`, `unknown step decision \"go\"`},
		{`{"decision":"skip","extra":1}`, "a step answer must be"},
		{`42`, "a step answer must be"},
		{`"approve"`, `unknown step decision \"approve\"`},
	} {
		resp := post(t, url+"/threads/t1/resume", resumeBody(in.ID, tc.payload))
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), tc.want) || !strings.Contains(string(data), "invalid_resume") {
			t.Errorf("payload %s: status %d, body %s; want 400 invalid_resume naming %q", tc.payload, resp.StatusCode, data, tc.want)
		}
		if after := stateOf(t, url).raw; after != before {
			t.Fatalf("payload %s changed the thread:\nbefore %s\nafter  %s", tc.payload, before, after)
		}
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/threads/t1/plan/resume", "", "waits for a person's step decision: answer interrupt " + in.ID},
		{"/threads/t1/runs/stream", `{"route":"/release","input":{"messages":[{"role":"user","content":"go on"}]}}`, "interrupt_pending"},
	} {
		resp := post(t, url+tc.path, tc.body)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(data), tc.want) {
			t.Errorf("POST %s: status %d, body %s; want 409 %s", tc.path, resp.StatusCode, data, tc.want)
		}
		if after := stateOf(t, url).raw; after != before {
			t.Fatalf("POST %s changed the thread:\nbefore %s\nafter  %s", tc.path, before, after)
		}
	}
	parked(t, url, resume(t, url, in.ID, `{"decision":"continue"}`), "Test", "Deploy")
}

// TestManualResumeAfterRestart: a run parked on a step by one server is
// listed and resumed by another on the same SQLite file.
func TestManualResumeAfterRestart(t *testing.T) {
	dir, db := releaseApp(t), filepath.Join(t.TempDir(), "dawn.db")
	url, h := serveRelease(t, dir, db, dawntest.Script().CallTool("writeTodos", todos("completed", "pending", "pending")))
	in := parked(t, url, start(t, url), "Build", "Test")
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}
	model := dawntest.Script().
		CallTool("writeTodos", todos("completed", "completed", "completed")).
		Reply("Released after the restart.")
	url2, _ := serveRelease(t, dir, db, model)
	st := stateOf(t, url2)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID || st.Interrupts[0].Detail.Next.Content != "Test" {
		t.Fatalf("state after the restart: %s", st.raw)
	}
	evs := resume(t, url2, in.ID, `"continue"`)
	if last := string(evs[len(evs)-1].Data); !strings.Contains(last, "Released after the restart.") {
		t.Fatalf("done of the resumed run: %s", last)
	}
	if st := stateOf(t, url2); st.Status != "idle" || st.Values.Plan.State != harness.Done {
		t.Fatalf("state after the resumed run: %s", st.raw)
	}
}

// TestManualSupervisorCancelWhileParked: the supervisor may cancel a plan
// that waits for a step decision; the thread stays parked until the
// interrupt is answered, and any answer then ends the run without asking
// the model.
func TestManualSupervisorCancelWhileParked(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", todos("completed", "pending", "pending")).Reply("never")
	url, _ := serveRelease(t, releaseApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := parked(t, url, start(t, url), "Build", "Test")
	resp := post(t, url+"/threads/t1/plan/cancel", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("supervisor cancel: %d", resp.StatusCode)
	}
	if st := stateOf(t, url); st.Status != "interrupted" || st.Values.Plan.State != harness.Cancelled || len(st.Interrupts) != 1 {
		t.Fatalf("state after the supervisor's cancel: %s", st.raw)
	}
	evs := resume(t, url, in.ID, `"continue"`)
	if types := strings.Join(dawntest.Types(evs), ","); types != "done" || model.Calls() != 1 {
		t.Fatalf("events %s after %d model calls; want the run to end at once", types, model.Calls())
	}
	if st := stateOf(t, url); st.Status != "idle" || st.Values.Plan.State != harness.Cancelled {
		t.Fatalf("state after the answer: %s", st.raw)
	}
}
