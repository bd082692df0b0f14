package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// manualReleaseApp is an app whose /release route owns a two-step plan that
// waits for a person after each finished step.
func manualReleaseApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"release/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou ship releases.\n",
		"release/plan.md":  "---\nenforce: true\nadvance: manual\n---\n- [ ] Build the release\n- [ ] Deploy it\n",
	}
	writeFiles(t, dir, files)
	return dir
}

// TestManualAdvanceParksOnAStep: the stock binary, on aimock, parks a run
// of an advance: manual plan on a step interrupt once the model finishes
// the first step; the server is SIGKILLed; a new server on the same store
// lists the interrupt and, resumed with "continue", goes on with the next
// step until the plan is done and the model answers.
func TestManualAdvanceParksOnAStep(t *testing.T) {
	mock := startAimock(t, "testdata/manual_advance.json")
	bin := buildDawn(t)
	app := manualReleaseApp(t)
	env := []string{"OPENAI_BASE_URL=" + mock + "/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY="}
	url, kill := launchDawn(t, bin, app, env...)

	run := `{"route":"/release","input":{"messages":[{"role":"user","content":"Ship release 7"}]}}`
	events := readEvents(t, postJSON(t, url+"/threads/m1/runs/stream", run))
	if got := strings.Join(eventTypes(events), ","); got != "plan_update,model_call,tool_call,tool_result,plan_update,plan_paused,interrupt,done" {
		t.Fatalf("events of the parked run: %s", got)
	}
	type item struct {
		Content  string `json:"content"`
		Status   string `json:"status"`
		Evidence string `json:"evidence"`
	}
	var in struct {
		ID     string `json:"interruptId"`
		Type   string `json:"type"`
		Kind   string `json:"kind"`
		After  bool   `json:"after"`
		Detail struct {
			Finished  item     `json:"finished"`
			Next      item     `json:"next"`
			Decisions []string `json:"decisions"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(events[6].Data, &in); err != nil || in.Type != "permission-request" || in.Kind != "step" || !in.After ||
		in.Detail.Finished != (item{"Build the release", "completed", "build 7 is green"}) || in.Detail.Next.Content != "Deploy it" || in.Detail.Next.Status != "pending" ||
		strings.Join(in.Detail.Decisions, ",") != "continue,skip,revise,cancel" {
		t.Fatalf("step interrupt: %s (%v)", events[6].Data, err)
	}
	if done := string(events[7].Data); !strings.Contains(done, `"interrupted":true`) {
		t.Fatalf("done of the parked run: %s", done)
	}
	kill()

	url2 := startDawn(t, bin, app, env...)
	var st struct {
		Status     string `json:"status"`
		Interrupts []struct {
			ID string `json:"interruptId"`
		} `json:"interrupts"`
		Values struct {
			Plan struct {
				State       string `json:"state"`
				PauseReason string `json:"pause_reason"`
			} `json:"plan"`
		} `json:"values"`
	}
	getState := func() {
		t.Helper()
		resp, err := http.Get(url2 + "/threads/m1/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		st.Interrupts = nil
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
	}
	getState()
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID || st.Values.Plan.State != "paused" || st.Values.Plan.PauseReason != "manual" {
		t.Fatalf("state after SIGKILL and restart: %+v", st)
	}
	body := fmt.Sprintf(`{"route":"/release","resume":[{"interruptId":%q,"status":"resolved","payload":"continue"}]}`, in.ID)
	events = readEvents(t, postJSON(t, url2+"/threads/m1/resume", body))
	got := strings.Join(eventTypes(events), ",")
	if !strings.HasPrefix(got, "plan_update,model_call,tool_call,tool_result,plan_update,plan_done,") || strings.Contains(got, "interrupt") || !strings.HasSuffix(got, ",done") {
		t.Fatalf("events of the resumed run: %s", got)
	}
	if last := string(events[len(events)-1].Data); !strings.Contains(last, "Release 7 is shipped.") {
		t.Fatalf("done of the resumed run lacks the answer: %s", last)
	}
	getState()
	if st.Status != "idle" || len(st.Interrupts) != 0 || st.Values.Plan.State != "done" {
		t.Fatalf("state after the resumed run: %+v", st)
	}
}
