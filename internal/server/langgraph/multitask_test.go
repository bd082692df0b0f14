package langgraph_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
)

// TestLangGraphQueueBound: a thread's queue takes DefaultQueueBound runs
// behind the run in flight; one more is refused with 429 queue_full and
// queues nothing.
func TestLangGraphQueueBound(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	h := apptest.New(t, supportApp(t), dawntest.Script().Wait(gate).Reply("first"), apptest.Options{})
	url := h.Serve(t)
	create := func(text string) *http.Response {
		return post(t, url+"/threads/full/runs", lgBody("/plain", text, map[string]any{"if_not_exists": "create"}))
	}
	r := create("running")
	r.Body.Close()
	for i := range runner.DefaultQueueBound {
		r := create("queued " + strconv.Itoa(i))
		var run struct {
			Status string `json:"status"`
		}
		_ = json.NewDecoder(r.Body).Decode(&run)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || run.Status != "pending" {
			t.Fatalf("queued run %d: %d %s, want 200 pending", i, r.StatusCode, run.Status)
		}
	}
	r = create("one too many")
	if e := decodeErr(t, r); r.StatusCode != http.StatusTooManyRequests || e.Error.Kind != "queue_full" {
		t.Fatalf("a run over the queue's bound: %d %+v, want 429 queue_full", r.StatusCode, e)
	}
	var runs []json.RawMessage
	getJSON(t, url+"/threads/full/runs?limit=1000", &runs)
	if len(runs) != runner.DefaultQueueBound+1 {
		t.Fatalf("%d runs listed, want the run in flight and %d queued", len(runs), runner.DefaultQueueBound)
	}
}
