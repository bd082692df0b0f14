package langgraph_test

import (
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestLangGraphCommandUpdateWithoutInput: a run whose command.update sets
// state fields and brings no input keeps the update, then goes on from
// the updated state, as LangGraph's does: no error, and the thread's
// state holds the fields.
func TestLangGraphCommandUpdateWithoutInput(t *testing.T) {
	app := writeApp(t, map[string]string{
		"keys/agent.md":   "You keep keys.",
		"keys/state.yaml": "keyOne:\n  type: string\n  default: \"\"\nkeyTwo:\n  type: string\n  default: \"\"\n",
	})
	h := apptest.New(t, app, dawntest.Script().Reply("first").Reply("again"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"cu"}`, nil)
	postOK(t, url+"/threads/cu/runs/wait", lgBody("/keys", "foo", nil), nil)
	events := readLG(t, post(t, url+"/threads/cu/runs/stream", `{"assistant_id":"/keys","command":{"update":{"keyOne":"value3","keyTwo":"value4"}}}`))
	for _, e := range events {
		if e.Type == "error" {
			t.Fatalf("the run failed: %s", e.Data)
		}
	}
	var state struct {
		Values struct {
			KeyOne   string      `json:"keyOne"`
			KeyTwo   string      `json:"keyTwo"`
			Messages []lgMessage `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/cu/state", &state)
	v := state.Values
	if v.KeyOne != "value3" || v.KeyTwo != "value4" || len(v.Messages) != 3 || v.Messages[2].Content != "again" {
		t.Fatalf("state after the update: %+v, want keyOne value3, keyTwo value4 and the model's answer on", v)
	}
}
