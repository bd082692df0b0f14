package longmemory_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// guardedAgent is a route whose memories are replaced only with a
// person's approval.
const guardedAgent = "---\nmemory: {approve_replace: true}\n---\nYou help and remember what matters."

type memoryInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		Key     string `json:"key"`
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	} `json:"detail"`
}

// guarded serves the guarded route on model, with a memory under
// deploy-day already kept by thread t0, and returns the server.
func guarded(t *testing.T, model *dawntest.ScriptedModel) *dawntest.Server {
	t.Helper()
	dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": guardedAgent})
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	first := srv.Run(t, "t0", "/assistant", "Deploys happen on Tuesday.")
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	if got := strings.Join(dawntest.Types(first.Events), ","); strings.Contains(got, "interrupt") {
		t.Fatalf("remembering a new key parked the run: %s", got)
	}
	if got := storedText(t, srv.URL, "deploy-day"); got != "Deploys happen on Tuesday" {
		t.Fatalf("the first memory was not kept: %q", got)
	}
	return srv
}

// replaceScript remembers under deploy-day in two runs: the second would
// replace the first.
func replaceScript() *dawntest.ScriptedModel {
	return dawntest.Script().
		CallTool("remember", map[string]string{"text": "Deploys happen on Tuesday", "key": "deploy-day"}).
		Reply("Noted.").
		CallTool("remember", map[string]string{"text": "Deploys happen on Friday", "key": "deploy-day"}).
		Reply("Done.")
}

// storedText is the text of the memory under key, read through the Store
// API, or "" when there is none.
func storedText(t *testing.T, url, key string) string {
	t.Helper()
	resp, err := http.Get(url + "/store/items?namespace=memories./assistant&key=" + key)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	var item struct {
		Value struct {
			Text string `json:"text"`
		} `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&item); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("store item %s: %d %v", key, resp.StatusCode, err)
	}
	return item.Value.Text
}

// parkOnReplace runs thread t1 until the replacing remember parks it, and
// returns the interrupt.
func parkOnReplace(t *testing.T, srv *dawntest.Server) memoryInterrupt {
	t.Helper()
	events := apptest.ReadSSE(t, apptest.PostJSON(t, srv.URL+"/threads/t1/runs/stream", apptest.RunBody("/assistant", "Deploys moved to Friday.")))
	if got := strings.Join(dawntest.Types(events), ","); !strings.HasSuffix(got, "tool_call,interrupt,done") {
		t.Fatalf("events of a parked run: %s", got)
	}
	var in memoryInterrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "permission-request" || in.Kind != "memory" || in.Detail.Key != "deploy-day" || in.Detail.OldText != "Deploys happen on Tuesday" || in.Detail.NewText != "Deploys happen on Friday" {
		t.Fatalf("interrupt: %s", events[len(events)-2].Data)
	}
	if got := storedText(t, srv.URL, "deploy-day"); got != "Deploys happen on Tuesday" {
		t.Fatalf("the parked write changed the memory: %q", got)
	}
	return in
}

func resumeMemory(t *testing.T, url, interruptID, status, payload string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"route":"/assistant","resume":[{"interruptId":%q,"status":%q,"payload":%s}]}`, interruptID, status, payload)
	return apptest.PostJSON(t, url+"/threads/t1/resume", body)
}

// lastToolResult is the output of the last tool_result event.
func lastToolResult(t *testing.T, events []stream.Event) string {
	t.Helper()
	out := toolOutputs(t, events)["remember"]
	if len(out) == 0 {
		t.Fatalf("no remember result in %s", strings.Join(dawntest.Types(events), ","))
	}
	return out[len(out)-1]
}

// TestReplaceApproval: over HTTP, a remember that would replace a memory
// parks the run with a "memory" interrupt showing the key, the old and
// the new text; approve writes it, reject (and a cancel) leaves the old
// memory and tells the model.
func TestReplaceApproval(t *testing.T) {
	tests := []struct {
		name, status, payload string
		wantText, wantResult  string
	}{
		{"approve", "resolved", `"approve"`, "Deploys happen on Friday", `{"key":"deploy-day","replaced":true}`},
		{"approve as an object", "resolved", `{"decision":"approve"}`, "Deploys happen on Friday", `{"key":"deploy-day","replaced":true}`},
		{"reject", "resolved", `"reject"`, "Deploys happen on Tuesday", `a person refused replacing memory \"deploy-day\"`},
		{"cancelled", "cancelled", `null`, "Deploys happen on Tuesday", `a person refused replacing memory \"deploy-day\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := replaceScript()
			srv := guarded(t, model)
			in := parkOnReplace(t, srv)
			events := apptest.ReadSSE(t, resumeMemory(t, srv.URL, in.ID, tt.status, tt.payload))
			if got := lastToolResult(t, events); !strings.Contains(got, tt.wantResult) {
				t.Fatalf("remember after %s: %s, want %s in it", tt.name, got, tt.wantResult)
			}
			if got := storedText(t, srv.URL, "deploy-day"); got != tt.wantText {
				t.Fatalf("memory after %s: %q, want %q", tt.name, got, tt.wantText)
			}
			reqs := model.Requests()
			if got := seen(reqs[len(reqs)-1]); !strings.Contains(got, strings.ReplaceAll(tt.wantResult, `\"`, `"`)) {
				t.Fatalf("the model saw %q", got)
			}
		})
	}
}

// TestReplaceApprovalBadDecision: an answer that is not a decision is
// refused with the choices, and the thread stays parked.
func TestReplaceApprovalBadDecision(t *testing.T) {
	srv := guarded(t, replaceScript())
	in := parkOnReplace(t, srv)
	for _, payload := range []string{`"maybe"`, `"once"`, `{"decision":"approve","args":{}}`, `7`} {
		resp := resumeMemory(t, srv.URL, in.ID, "resolved", payload)
		if e := apptest.DecodeError(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, `"approve" or "reject"`) {
			t.Fatalf("payload %s: %d %+v", payload, resp.StatusCode, e)
		}
	}
	if got := storedText(t, srv.URL, "deploy-day"); got != "Deploys happen on Tuesday" {
		t.Fatalf("a refused answer changed the memory: %q", got)
	}
	apptest.ReadSSE(t, resumeMemory(t, srv.URL, in.ID, "resolved", `"approve"`))
	if got := storedText(t, srv.URL, "deploy-day"); got != "Deploys happen on Friday" {
		t.Fatalf("approve after refused answers: %q", got)
	}
}

// TestNewMemoryIsNotHeld: with approve_replace, remembering under a new
// key, or the text already kept under a key, runs without asking.
func TestNewMemoryIsNotHeld(t *testing.T) {
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "Deploys happen on Tuesday", "key": "deploy-day"}).
		Reply("Noted.").
		CallTool("remember", map[string]string{"text": "The on-call is Ana", "key": "on-call"}).
		CallTool("remember", map[string]string{"text": "Deploys happen on Tuesday", "key": "deploy-day"}).
		Reply("Noted.")
	srv := guarded(t, model)
	res := srv.Run(t, "t1", "/assistant", "Ana is on call.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := strings.Join(dawntest.Types(res.Events), ","); strings.Contains(got, "interrupt") {
		t.Fatalf("a remember that replaces nothing parked the run: %s", got)
	}
	if got := toolOutputs(t, res.Events)["remember"]; len(got) != 2 || got[0] != `{"key":"on-call","replaced":false}` || got[1] != `{"key":"deploy-day","replaced":true}` {
		t.Fatalf("remember: %v", got)
	}
	if got := storedText(t, srv.URL, "on-call"); got != "The on-call is Ana" {
		t.Fatalf("the new memory: %q", got)
	}
}
