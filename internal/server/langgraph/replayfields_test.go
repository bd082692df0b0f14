package langgraph_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestReplayStartsFromTheThreadsFields: a finished run replayed from its
// start (GET .../runs/:run/stream) begins with the state fields the run
// started from, as its live stream did: those the thread had before it,
// with its input's on top, not the route's initial ones.
func TestReplayStartsFromTheThreadsFields(t *testing.T) {
	app := writeApp(t, map[string]string{
		"keys/agent.md":   "You keep keys.",
		"keys/state.yaml": "keyOne:\n  type: string\n  default: \"\"\nkeyTwo:\n  type: string\n  default: \"\"\n",
	})
	h := apptest.New(t, app, dawntest.Script().Reply("first").Reply("second").Reply("third"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"rf"}`, nil)
	postOK(t, url+"/threads/rf/runs/wait", `{"assistant_id":"/keys","input":{"messages":[{"type":"human","content":"one"}],"keyOne":"x"}}`, nil)
	firstValues := func(body string) (live, replay map[string]any) {
		t.Helper()
		resp := post(t, url+"/threads/rf/runs/stream", body)
		run := resp.Header.Get("Content-Location")
		first := func(resp *http.Response) map[string]any {
			for _, e := range readLG(t, resp) {
				var v map[string]any
				if e.Type == "values" && json.Unmarshal(e.Data, &v) == nil {
					return v
				}
			}
			t.Fatal("no values event")
			return nil
		}
		live = first(resp)
		again, err := http.Get(url + run + "/stream?stream_mode=values")
		if err != nil {
			t.Fatal(err)
		}
		return live, first(again)
	}
	live, replay := firstValues(`{"assistant_id":"/keys","input":{"messages":[{"type":"human","content":"two"}]},"stream_mode":"values"}`)
	if live["keyOne"] != "x" || replay["keyOne"] != live["keyOne"] {
		t.Errorf("a run after one that set keyOne: live starts with %v, the replay with %v; want x in both", live["keyOne"], replay["keyOne"])
	}
	live, replay = firstValues(`{"assistant_id":"/keys","input":{"messages":[{"type":"human","content":"three"}],"keyTwo":"y"},"stream_mode":"values"}`)
	if live["keyTwo"] != "y" || replay["keyTwo"] != live["keyTwo"] || replay["keyOne"] != "x" {
		t.Errorf("a run whose input sets keyTwo: live starts with %v, the replay with %v", live, replay)
	}
}
