package langgraph_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestLangGraphUpdateStateWhileRunPending: a run created with
// after_seconds waits, and the thread counts as busy meanwhile, so a
// state update is refused with 409 and changes nothing; once the run is
// cancelled the same update is kept.
func TestLangGraphUpdateStateWhileRunPending(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("never"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"busy"}`, nil)
	var run struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	postOK(t, url+"/threads/busy/runs", lgBody("/plain", "foo", map[string]any{"after_seconds": 30}), &run)
	if run.Status != "pending" {
		t.Fatalf("a delayed run: status %q, want pending", run.Status)
	}
	update := `{"values":{"messages":[{"type":"ai","content":"Sisyphus"}]},"as_node":"agent"}`
	r := post(t, url+"/threads/busy/state", update)
	if e := decodeErr(t, r); r.StatusCode != http.StatusConflict || e.Error.Kind != "run_in_flight" {
		t.Fatalf("a state update while a run waits: %d %+v, want 409 run_in_flight", r.StatusCode, e)
	}
	var state struct {
		Values map[string]any `json:"values"`
	}
	getJSON(t, url+"/threads/busy/state", &state)
	if strings.Contains(mustMarshalJSON(state), "Sisyphus") {
		t.Fatalf("the refused update was kept: %+v", state)
	}
	postOK(t, url+"/threads/busy/runs/"+run.RunID+"/cancel?wait=1", `{}`, nil)
	postOK(t, url+"/threads/busy/state", update, nil)
	getJSON(t, url+"/threads/busy/state", &state)
	if !strings.Contains(mustMarshalJSON(state), "Sisyphus") {
		t.Fatalf("the update after the cancel was not kept: %+v", state)
	}
}
