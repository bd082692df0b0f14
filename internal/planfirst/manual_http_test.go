package planfirst_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// These tests drive plan-first runs on a route with advance: manual over
// real HTTP, on a SQLite file, with a scripted model whose calls they count:
// the run parks on a step interrupt after each finished step, and the
// resume neither asks the planner again nor runs a finished step again.

const manualFront = "advance: manual\nmode: always\n"

type stepInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		Plan struct {
			Goal  string `json:"goal"`
			State string `json:"state"`
			Done  int    `json:"done"`
			Total int    `json:"total"`
		} `json:"plan"`
		Finished struct {
			Position int    `json:"position"`
			Content  string `json:"content"`
			Status   string `json:"status"`
			Result   string `json:"result"`
		} `json:"finished"`
		Next struct {
			Position int    `json:"position"`
			Content  string `json:"content"`
			Status   string `json:"status"`
		} `json:"next"`
		Decisions []string `json:"decisions"`
		Steps     []struct {
			ID, Task, Status, Result string
		} `json:"steps"`
		NextSteps []string `json:"next_steps"`
	} `json:"detail"`
}

// parkedAfter reads the events of a run that must park on a step interrupt
// after step finished, with next the step it goes on with, and checks the
// thread is interrupted and lists it.
func parkedAfter(t *testing.T, url, thread string, events []stream.Event, finished, result, next string) stepInterrupt {
	t.Helper()
	types := dawntest.Types(events)
	n := len(types)
	if n < 2 || types[n-2] != "interrupt" || types[n-1] != "done" || strings.Count(strings.Join(types, ","), "interrupt") != 1 {
		t.Fatalf("events of a run that parks after %s: %s", finished, strings.Join(types, ","))
	}
	var in stepInterrupt
	if err := json.Unmarshal(events[n-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	d := in.Detail
	if in.Type != "permission-request" || in.Kind != "step" || !strings.HasPrefix(in.ID, "step-") ||
		!strings.HasPrefix(d.Finished.Content, finished+": ") || d.Finished.Status != "completed" || d.Finished.Result != result ||
		!strings.HasPrefix(d.Next.Content, next+": ") || d.Next.Status != "pending" ||
		strings.Join(d.Decisions, ",") != "continue,skip,cancel" || d.Plan.State != "paused" || d.Plan.Total != 3 || d.Plan.Goal != "Ship it" ||
		len(d.Steps) != 1 || d.Steps[0].ID != finished || d.Steps[0].Result != result || strings.Join(d.NextSteps, ",") != next {
		t.Fatalf("step interrupt after %s: %s", finished, events[n-2].Data)
	}
	var done struct {
		Output struct {
			Interrupted bool            `json:"interrupted"`
			Interrupts  []stepInterrupt `json:"interrupts"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[n-1].Data, &done); err != nil || !done.Output.Interrupted || len(done.Output.Interrupts) != 1 || done.Output.Interrupts[0].ID != in.ID {
		t.Fatalf("done of a parked step: %s", events[n-1].Data)
	}
	st, raw := stateOf(t, url, thread)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID || st.Values.Plan.State != "paused" {
		t.Fatalf("state of a thread parked after %s: %s", finished, raw)
	}
	return in
}

// startManual runs the job route plan-first with advance: manual and
// returns the step interrupt it parks on after E1.
func startManual(t *testing.T, url, thread string) stepInterrupt {
	t.Helper()
	events := readSSE(t, post(t, url+"/threads/"+thread+"/runs/stream", runBody("", "Ship release 1.4")))
	return parkedAfter(t, url, thread, events, "E1", "built v1.4", "E2")
}

// TestManualStepContinue: the run parks after each step; "continue" runs
// the next from the saved outputs (E2's placeholder reads E1's output),
// and after the last step the agent answers. The model is called once to
// plan, once per step and once to answer: nothing runs twice.
func TestManualStepContinue(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("tests pass").Reply("deployed").Reply("Shipped 1.4.")
	url, _ := serve(t, jobApp(t, manualFront), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := startManual(t, url, "t1")
	if model.Calls() != 2 {
		t.Fatalf("model calls before the first decision = %d, want 2 (planner, E1)", model.Calls())
	}
	resp := post(t, url+"/threads/t1/runs/wait", runBody("", "something else"))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 409 || !strings.Contains(string(data), "interrupt_pending") {
		t.Fatalf("a new message on the parked thread: %d %s", resp.StatusCode, data)
	}

	events := readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"continue"`)))
	in2 := parkedAfter(t, url, "t1", events, "E2", "tests pass", "E3")
	if in2.ID == in.ID || model.Calls() != 3 {
		t.Fatalf("after continue: interrupt %s (was %s), %d model calls, want 3", in2.ID, in.ID, model.Calls())
	}
	events = readSSE(t, post(t, url+"/threads/t1/resume", `{"route":"/job","resume":[{"interruptId":"`+in2.ID+`","status":"resolved","payload":{"decision":"continue"}}]}`))
	if types := strings.Join(dawntest.Types(events), ","); strings.Contains(types, "interrupt") || !strings.Contains(types, "step_started") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after the last continue: %s", types)
	}
	if model.Calls() != 5 {
		t.Fatalf("model calls = %d, want 5: planner once, 3 steps, the answer", model.Calls())
	}
	tasks := ranTasks(model, 1)
	want := []string{"Build the release", "Test built v1.4", "Deploy after tests pass"}
	for i, w := range want {
		if tasks[i] != w {
			t.Fatalf("step %d ran %q, want %q (all: %q)", i+1, tasks[i], w, tasks)
		}
	}
	if !strings.Contains(tasks[3], "3 steps, 3 completed") {
		t.Fatalf("the answer was not written from the report of all three steps: %q", tasks[3])
	}
	st, raw := stateOf(t, url, "t1")
	msgs := st.Values.Messages
	if st.Status != "idle" || len(st.Interrupts) != 0 || st.Values.Plan.State != "done" || len(st.Values.Plan.Items) != 3 ||
		strings.Contains(raw, "__strategy") || strings.Contains(raw, "__interrupts") || len(msgs) != 4 || msgs[3].Content != "Shipped 1.4." {
		t.Fatalf("state after the last continue: %s", raw)
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
	if err := json.Unmarshal([]byte(get(t, url+"/threads/t1/runs")), &runs); err != nil || len(runs) != 3 || runs[0].Status != "success" || runs[0].Output.PlanFirst.Decision != "continue" || runs[0].Output.PlanFirst.Steps != 3 || runs[1].Status != "interrupted" || runs[2].Status != "interrupted" {
		t.Fatalf("runs: %+v (%v)", runs, err)
	}
}

// TestManualStepSkip: "skip" marks the next step skipped without running
// it; the step after it still runs, its placeholder saying E2 was skipped,
// as it would say a failed step's error.
func TestManualStepSkip(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("deployed").Reply("Shipped without tests.")
	url, _ := serve(t, jobApp(t, manualFront), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := startManual(t, url, "t1")
	events := readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"skip"`)))
	types := strings.Join(dawntest.Types(events), ",")
	if strings.Contains(types, "interrupt") || !strings.HasPrefix(types, "step_finished,") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after skip: %s", types)
	}
	if !strings.Contains(string(events[0].Data), `"step":"E2"`) || !strings.Contains(string(events[0].Data), `"skipped"`) {
		t.Fatalf("first event after skip: %s", events[0].Data)
	}
	tasks := ranTasks(model, 1)
	if model.Calls() != 4 || tasks[1] != "Deploy after [step E2 skipped: a person skipped it]" || !strings.Contains(tasks[2], "1 skipped") {
		t.Fatalf("after skip: %d model calls (want 4: planner, E1, E3, answer), tasks %q", model.Calls(), tasks)
	}
	st, raw := stateOf(t, url, "t1")
	items := st.Values.Plan.Items
	if st.Status != "idle" || st.Values.Plan.State != "done" || len(items) != 3 || items[0].Status != "completed" || items[1].Status != "skipped" || items[2].Status != "completed" {
		t.Fatalf("state after skip: %s", raw)
	}
}

// TestManualStepCancel: "cancel", or a cancelled answer, cancels the plan
// and runs nothing else: no step, no answer.
func TestManualStepCancel(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"cancel", `{"interruptId":%q,"status":"resolved","payload":"cancel"}`},
		{"cancelled", `{"interruptId":%q,"status":"cancelled"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("must not be asked")
			url, _ := serve(t, jobApp(t, manualFront), filepath.Join(t.TempDir(), "dawn.db"), model)
			in := startManual(t, url, "t1")
			events := readSSE(t, post(t, url+"/threads/t1/resume", `{"route":"/job","resume":[`+fmt.Sprintf(tc.answer, in.ID)+`]}`))
			if got := strings.Join(dawntest.Types(events), ","); got != "plan_update,plan_cancelled,done" {
				t.Fatalf("events after cancel: %s", got)
			}
			if model.Calls() != 2 {
				t.Fatalf("the model was called %d times, want 2 (planner, E1): a cancelled plan runs nothing else", model.Calls())
			}
			st, raw := stateOf(t, url, "t1")
			items := st.Values.Plan.Items
			if st.Status != "idle" || len(st.Interrupts) != 0 || st.Values.Plan.State != "cancelled" || items[0].Status != "completed" || items[1].Status != "pending" || items[2].Status != "pending" || strings.Contains(raw, "__strategy") {
				t.Fatalf("state after cancel: %s", raw)
			}
			var runs []struct {
				Status string `json:"status"`
				Output struct {
					Stopped string `json:"stopped"`
				} `json:"output"`
			}
			if err := json.Unmarshal([]byte(get(t, url+"/threads/t1/runs")), &runs); err != nil || runs[0].Status != "success" || runs[0].Output.Stopped != "plan_cancelled" {
				t.Fatalf("record of the cancelling run: %+v (%v)", runs, err)
			}
		})
	}
}

// TestManualStepBadAnswerChangesNothing: revise (which a plan-first plan
// cannot do mid-run) and other bad answers are a 400 naming the problem;
// the thread stays byte for byte as it was, and continue still works.
func TestManualStepBadAnswerChangesNothing(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("tests pass")
	url, _ := serve(t, jobApp(t, manualFront), filepath.Join(t.TempDir(), "dawn.db"), model)
	in := startManual(t, url, "t1")
	_, before := stateOf(t, url, "t1")
	runsBefore := get(t, url+"/threads/t1/runs")
	cases := []struct{ name, payload, want string }{
		{"revise", `{"decision":"revise","note":"test before building"}`, `a plan-first plan cannot be revised while it runs`},
		{"revise without note", `"revise"`, `revise needs the person's note`},
		{"unknown word", `"approve"`, `unknown step decision \"approve\"`},
		{"unknown field", `{"decision":"continue","why":"x"}`, `unknown field \"why\"`},
		{"note on continue", `{"decision":"continue","note":"x"}`, `a note goes only with`},
	}
	for _, tc := range cases {
		resp := post(t, url+"/threads/t1/resume", resumeBody(in.ID, tc.payload))
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(data), "invalid_resume") || !strings.Contains(string(data), tc.want) || !strings.Contains(string(data), in.ID) {
			t.Errorf("%s: %d %s, want 400 invalid_resume naming %s with %s", tc.name, resp.StatusCode, data, in.ID, tc.want)
		}
		if _, after := stateOf(t, url, "t1"); after != before {
			t.Fatalf("%s changed the thread:\nbefore %s\nafter  %s", tc.name, before, after)
		}
		if after := get(t, url+"/threads/t1/runs"); after != runsBefore {
			t.Fatalf("%s recorded a run:\nbefore %s\nafter  %s", tc.name, runsBefore, after)
		}
	}
	if model.Calls() != 2 {
		t.Fatalf("bad answers called the model: %d calls", model.Calls())
	}
	events := readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"continue"`)))
	parkedAfter(t, url, "t1", events, "E2", "tests pass", "E3")
	if model.Calls() != 3 {
		t.Fatalf("continue after the bad answers: %d calls, want 3", model.Calls())
	}
}

// TestManualStepResumedAfterRestart: the run parks after E1 on one server;
// a new server on the same SQLite file, with a model that never planned nor
// ran E1, goes on from E1's saved output.
func TestManualStepResumedAfterRestart(t *testing.T) {
	dir, db := jobApp(t, manualFront), filepath.Join(t.TempDir(), "dawn.db")
	first := dawntest.Script().Reply(threePlan).Reply("built v1.4")
	url1, h1 := serve(t, dir, db, first)
	in := startManual(t, url1, "t1")
	h1.Runs.Shutdown(context.Background())
	if err := h1.Store.Close(); err != nil {
		t.Fatal(err)
	}

	second := dawntest.Script().Reply("tests pass").Reply("deployed").Reply("Shipped after a restart.")
	url2, _ := serve(t, dir, db, second)
	if st, raw := stateOf(t, url2, "t1"); st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state after the restart: %s", raw)
	}
	events := readSSE(t, post(t, url2+"/threads/t1/resume", resumeBody(in.ID, `"continue"`)))
	in2 := parkedAfter(t, url2, "t1", events, "E2", "tests pass", "E3")
	readSSE(t, post(t, url2+"/threads/t1/resume", resumeBody(in2.ID, `"continue"`)))
	if tasks := ranTasks(second, 0); second.Calls() != 3 || tasks[0] != "Test built v1.4" || tasks[1] != "Deploy after tests pass" {
		t.Fatalf("after the restart: %d calls (want 3: E2, E3, the answer; no planner, no E1), tasks %q", second.Calls(), tasks)
	}
	if st, raw := stateOf(t, url2, "t1"); st.Status != "idle" || st.Values.Plan.State != "done" || st.Values.Messages[len(st.Values.Messages)-1].Content != "Shipped after a restart." {
		t.Fatalf("state after the resume: %s", raw)
	}
}

// TestManualStepParallelParksAfterBatch: with parallel 2 a step ending
// starts nothing new, the steps already running end, and then the run
// parks: after A (B and C are next), then after B and C together (D is
// next). Every step runs once and the planner once.
func TestManualStepParallelParksAfterBatch(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"job/agent.md": "You do the job.",
		"job/plan.md":  "---\nenforce: true\nparallel: 2\n" + manualFront + "---\n- [ ] Do the job\n",
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
	diamondPlan := `{"goal":"Diamond","steps":[{"id":"A","task":"Start"},{"id":"B","task":"Left of #A","deps":["A"]},{"id":"C","task":"Right of #A","deps":["A"]},{"id":"D","task":"Join #B and #C","deps":["B","C"]}]}`
	// Each step answers with its task's first word, whichever order the
	// parallel steps call in.
	model := dawntest.Script().Reply(diamondPlan).Then(func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
		last := fmt.Sprint(msgs[len(msgs)-1].Parts[0])
		word, _, _ := strings.Cut(last, " ")
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.ToLower(word) + "-done"}}}, nil
	}).Repeat()
	url, _ := serve(t, dir, filepath.Join(t.TempDir(), "dawn.db"), model)
	parse := func(events []stream.Event) stepInterrupt {
		t.Helper()
		types := dawntest.Types(events)
		if n := len(types); n < 2 || types[n-2] != "interrupt" || types[n-1] != "done" {
			t.Fatalf("events of a parking run: %s", strings.Join(types, ","))
		}
		var in stepInterrupt
		if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	in := parse(readSSE(t, post(t, url+"/threads/p1/runs/stream", runBody("", "Walk the diamond"))))
	if model.Calls() != 2 || len(in.Detail.Steps) != 1 || in.Detail.Steps[0].ID != "A" || strings.Join(in.Detail.NextSteps, ",") != "B,C" || !strings.HasPrefix(in.Detail.Next.Content, "B: ") {
		t.Fatalf("park after A (%d calls): %+v", model.Calls(), in.Detail)
	}
	in = parse(readSSE(t, post(t, url+"/threads/p1/resume", resumeBody(in.ID, `"continue"`))))
	var ended []string
	for _, s := range in.Detail.Steps {
		ended = append(ended, s.ID+"="+s.Status)
	}
	slices.Sort(ended)
	if model.Calls() != 4 || strings.Join(ended, ",") != "B=completed,C=completed" || strings.Join(in.Detail.NextSteps, ",") != "D" ||
		!strings.HasPrefix(in.Detail.Next.Content, "D: ") || in.Detail.Plan.Done != 3 {
		t.Fatalf("park after B and C (%d calls): %+v", model.Calls(), in.Detail)
	}
	if st, raw := stateOf(t, url, "p1"); st.Values.Plan.Items[1].Status != "completed" || st.Values.Plan.Items[2].Status != "completed" || st.Values.Plan.Items[3].Status != "pending" {
		t.Fatalf("plan items after B and C: %s", raw)
	}
	readSSE(t, post(t, url+"/threads/p1/resume", resumeBody(in.ID, `"continue"`)))
	tasks := ranTasks(model, 1)
	slices.Sort(tasks[1:3])
	if model.Calls() != 6 || tasks[0] != "Start" || tasks[1] != "Left of start-done" || tasks[2] != "Right of start-done" || tasks[3] != "Join left-done and right-done" {
		t.Fatalf("after the last continue: %d calls (want 6: planner, A, B, C, D, answer), tasks %q", model.Calls(), tasks)
	}
	if st, raw := stateOf(t, url, "p1"); st.Status != "idle" || st.Values.Plan.State != "done" {
		t.Fatalf("state at the end: %s", raw)
	}
}

// TestManualStepAfterApproval: with approval: required as well, the plan
// parks first on its plan interrupt; once approved it parks after E1 on a
// step interrupt, and continue goes on without the planner.
func TestManualStepAfterApproval(t *testing.T) {
	model := dawntest.Script().Reply(threePlan).Reply("built v1.4").Reply("tests pass")
	url, _ := serve(t, jobApp(t, "approval: required\n"+manualFront), filepath.Join(t.TempDir(), "dawn.db"), model)
	events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("", "Ship release 1.4")))
	var plan planInterrupt
	if err := json.Unmarshal(events[0].Data, &plan); err != nil || plan.Kind != "plan" || model.Calls() != 1 {
		t.Fatalf("first park (%d calls): %s", model.Calls(), events[0].Data)
	}
	events = readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(plan.ID, `"approve"`)))
	in := parkedAfter(t, url, "t1", events, "E1", "built v1.4", "E2")
	events = readSSE(t, post(t, url+"/threads/t1/resume", resumeBody(in.ID, `"continue"`)))
	parkedAfter(t, url, "t1", events, "E2", "tests pass", "E3")
	if tasks := ranTasks(model, 1); model.Calls() != 3 || tasks[1] != "Test built v1.4" {
		t.Fatalf("after approve and continue: %d calls (want 3), tasks %q", model.Calls(), tasks)
	}
}
