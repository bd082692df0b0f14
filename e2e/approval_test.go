package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// TestApprovalSurvivesSIGKILL: the stock binary, on aimock, parks a run on
// a tool that needs approval; the server is SIGKILLed; a new server on the
// same app folder (and store) still lists the interrupt and, resumed with
// "once", runs the tool and finishes the run.
func TestApprovalSurvivesSIGKILL(t *testing.T) {
	mock := startAimock(t, "testdata/plan_then_answer.json")
	bin := buildDawn(t)
	app := supportApp(t)
	agent := filepath.Join(app, "support", "[tenant]", "agent.md")
	if err := os.WriteFile(agent, []byte("---\nmodel: openai:gpt-4o-mini\napprove: [writeTodos]\n---\nYou help customers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + mock + "/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY="}
	url, kill := launchDawn(t, bin, app, env...)

	events := readEvents(t, postJSON(t, url+"/threads/k1/runs/stream", runBody("/support/acme")))
	types := eventTypes(events)
	if got := strings.Join(types, ","); got != "model_call,tool_call,interrupt,done" {
		t.Fatalf("events of the parked run: %s", got)
	}
	var in struct {
		ID     string `json:"interruptId"`
		Kind   string `json:"kind"`
		Detail struct {
			ToolName string `json:"toolName"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(events[2].Data, &in); err != nil || in.Kind != "tool" || in.Detail.ToolName != "writeTodos" {
		t.Fatalf("interrupt: %s", events[2].Data)
	}
	kill()

	url2 := startDawn(t, bin, app, env...)
	var st struct {
		Status     string `json:"status"`
		Interrupts []struct {
			ID string `json:"interruptId"`
		} `json:"interrupts"`
	}
	resp, err := http.Get(url2 + "/threads/k1/state")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state after SIGKILL and restart: %+v (%v)", st, err)
	}
	body := fmt.Sprintf(`{"route":"/support/acme","resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID)
	events = readEvents(t, postJSON(t, url2+"/threads/k1/resume", body))
	got := strings.Join(eventTypes(events), ",")
	if !strings.HasPrefix(got, "tool_result,plan_update,") || !strings.HasSuffix(got, ",done") {
		t.Fatalf("events of the resumed run: %s", got)
	}
	if last := string(events[len(events)-1].Data); !strings.Contains(last, answer) {
		t.Fatalf("done of the resumed run lacks the answer: %s", last)
	}
}

func eventTypes(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}
