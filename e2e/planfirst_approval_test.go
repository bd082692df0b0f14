package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// planFirstReleaseApp writes an app with one route on the OpenAI model whose plan
// the harness owns, and returns its folder.
func planFirstReleaseApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"release/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou run releases.\n",
		"release/plan.md":  "---\nenforce: true\nparallel: 1\n---\n- [ ] Release\n",
	}
	writeFiles(t, dir, files)
	return dir
}

// plannerCalls counts the chat completions aimock at mock answered whose
// last user message is plan-first's planning directive.
func plannerCalls(t *testing.T, mock string) int {
	t.Helper()
	resp, err := http.Get(mock + "/__aimock/journal?path=/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct {
		Body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatalf("aimock journal: %v", err)
	}
	n := 0
	for _, e := range entries {
		for i := len(e.Body.Messages) - 1; i >= 0; i-- {
			if m := e.Body.Messages[i]; m.Role == "user" {
				if strings.HasPrefix(fmt.Sprint(m.Content), "PLAN FIRST.") {
					n++
				}
				break
			}
		}
	}
	return n
}

// TestPlanFirstPreviewApproved: the stock binary, on aimock, previews a
// plan-first plan, which parks the run on a plan interrupt; the server is
// SIGKILLed; a new server on the same app folder lists the interrupt and,
// resumed with "approve", runs exactly that plan without asking the
// planner again, and finishes with the answer.
func TestPlanFirstPreviewApproved(t *testing.T) {
	mock := startAimock(t, "testdata/planfirst_approval.json")
	bin := buildDawn(t)
	app := planFirstReleaseApp(t)
	env := []string{"OPENAI_BASE_URL=" + mock + "/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY="}
	url, kill := launchDawn(t, bin, app, env...)

	body := `{"route":"/release","plan_first":"preview","input":{"messages":[{"role":"user","content":"Release 2.0 and announce it"}]}}`
	events := readEvents(t, postJSON(t, url+"/threads/p1/runs/stream", body))
	if got := strings.Join(eventTypes(events), ","); got != "plan_preview,interrupt,done" {
		t.Fatalf("events of the preview: %s", got)
	}
	var in struct {
		ID     string `json:"interruptId"`
		Type   string `json:"type"`
		Kind   string `json:"kind"`
		Detail struct {
			Plan struct {
				Steps []struct {
					ID   string   `json:"id"`
					Deps []string `json:"deps"`
				} `json:"steps"`
			} `json:"plan"`
			Order []string `json:"order"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(events[1].Data, &in); err != nil || in.Type != "permission-request" || in.Kind != "plan" ||
		len(in.Detail.Plan.Steps) != 2 || strings.Join(in.Detail.Plan.Steps[1].Deps, ",") != "E1" || strings.Join(in.Detail.Order, ",") != "E1,E2" {
		t.Fatalf("plan interrupt: %s (%v)", events[1].Data, err)
	}
	var done struct {
		Output struct {
			Interrupted bool `json:"interrupted"`
			Preview     struct {
				InterruptID string   `json:"interruptId"`
				Order       []string `json:"order"`
			} `json:"preview"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[2].Data, &done); err != nil || !done.Output.Interrupted || done.Output.Preview.InterruptID != in.ID || len(done.Output.Preview.Order) != 2 {
		t.Fatalf("done of the preview: %s (%v)", events[2].Data, err)
	}
	kill()

	url2 := startDawn(t, bin, app, env...)
	var st struct {
		Status     string `json:"status"`
		Interrupts []struct {
			ID   string `json:"interruptId"`
			Kind string `json:"kind"`
		} `json:"interrupts"`
	}
	resp, err := http.Get(url2 + "/threads/p1/state")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID || st.Interrupts[0].Kind != "plan" {
		t.Fatalf("state after SIGKILL and restart: %+v (%v)", st, err)
	}

	// A bad edit is refused and changes nothing.
	bad := fmt.Sprintf(`{"route":"/release","resume":[{"interruptId":%q,"status":"resolved","payload":{"decision":"edit","plan":{"steps":[{"id":"E1","task":"x","deps":["E2"]}]}}}]}`, in.ID)
	resp = postJSON(t, url2+"/threads/p1/resume", bad)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), `deps names \"E2\", which is not an earlier step`) {
		t.Fatalf("a bad edit: %d %s", resp.StatusCode, data)
	}

	approve := fmt.Sprintf(`{"route":"/release","resume":[{"interruptId":%q,"status":"resolved","payload":"approve"}]}`, in.ID)
	events = readEvents(t, postJSON(t, url2+"/threads/p1/resume", approve))
	got := strings.Join(eventTypes(events), ",")
	if strings.Contains(got, "interrupt") || strings.Count(got, "step_started") != 2 || !strings.HasSuffix(got, ",done") {
		t.Fatalf("events of the approved run: %s", got)
	}
	if last := string(events[len(events)-1].Data); !strings.Contains(last, "The release is announced.") || !strings.Contains(last, "Write the announcement from Notes: faster sync") {
		t.Fatalf("done of the approved run lacks the answer or the step: %s", last)
	}
	if n := plannerCalls(t, mock); n != 1 {
		t.Fatalf("the planner was asked %d times, want once: approve runs the parked plan", n)
	}
	resp, err = http.Get(url2 + "/threads/p1/state")
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.Interrupts = "", nil
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Status != "idle" || len(st.Interrupts) != 0 {
		t.Fatalf("state after approve: %+v (%v)", st, err)
	}
}
