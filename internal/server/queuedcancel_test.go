package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// TestQueuedRunCancelledBeforeItStarts: a runs/wait and a runs/stream
// queued with enqueue behind a run in flight, whose runs are cancelled
// before they start (runs.cancel of a pending run), end as the docs say a
// cancelled run ends: 409 run_cancelled, and done {"output":
// {"cancelled":true}}. Before, runs/wait answered 500 run_failed and the
// stream's done said {"error":"cancelled before it started",
// "interrupted":true}, the shape of a run parked for a person.
func TestQueuedRunCancelledBeforeItStarts(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	model := dawntest.Script().Wait(gate).Then(echoTurn).Repeat()
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	base := h.Serve(t)
	go func() { readBody(t, post(t, base+"/threads/q/runs/wait", multitaskBody("first", nil))) }()
	for model.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	waited := make(chan *http.Response, 1)
	go func() {
		waited <- post(t, base+"/threads/q/runs/wait", multitaskBody("waits", map[string]any{"multitask_strategy": "enqueue"}))
	}()
	waitStatuses(t, base, "q", "pending", "running")
	streamed := make(chan []stream.Event, 1)
	go func() {
		streamed <- readSSE(t, post(t, base+"/threads/q/runs/stream", multitaskBody("streams", map[string]any{"multitask_strategy": "enqueue"})))
	}()
	waitStatuses(t, base, "q", "pending", "pending", "running")
	var runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	getJSON(t, base+"/threads/q/runs", &runs)
	for _, r := range runs {
		if r.Status != "pending" {
			continue
		}
		resp := post(t, base+"/threads/q/runs/"+r.RunID+"/cancel", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("cancelling queued run %s: %d %s", r.RunID, resp.StatusCode, readBody(t, resp))
		}
		resp.Body.Close()
	}
	r := <-waited
	if e := decodeErr(t, r); r.StatusCode != http.StatusConflict || e.Error.Kind != "run_cancelled" {
		t.Errorf("runs/wait of a run cancelled before it started: %d %+v, want 409 run_cancelled", r.StatusCode, e)
	}
	events := <-streamed
	done := events[len(events)-1]
	var d struct {
		Output map[string]json.RawMessage `json:"output"`
	}
	if done.Type != stream.TypeDone || json.Unmarshal(done.Data, &d) != nil || string(d.Output["cancelled"]) != "true" || d.Output["interrupted"] != nil {
		t.Errorf("the stream of a run cancelled before it started ended with %s %s, want done {\"output\":{\"cancelled\":true}}", done.Type, done.Data)
	}
}
