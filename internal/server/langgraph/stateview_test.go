package langgraph_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestGetStateShowsTheRun: getState, of the latest state or at any
// checkpoint id, shows in its metadata the run's metadata and the
// assistant it was started with, as history does, and the checkpoints a
// run streams carry the same metadata, for a run of a created assistant
// with metadata. A checkpoint derived for LangGraph's view is what
// history shows; a stored one keeps Dawn's step, source and parent
// (getState is Dawn's too), and is history's otherwise.
func TestGetStateShowsTheRun(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("A1").Reply("A2")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	var as struct {
		AssistantID string `json:"assistant_id"`
	}
	postOK(t, url+"/assistants", `{"graph_id":"support/[tenant]","config":{"configurable":{"tenant":"acme"}}}`, &as)
	postOK(t, url+"/threads", `{"thread_id":"v1"}`, nil)
	parts := readLG(t, post(t, url+"/threads/v1/runs/stream", lgBody(as.AssistantID, "Q1", map[string]any{"stream_mode": "checkpoints", "metadata": map[string]any{"source_app": "test"}})))

	var hist []json.RawMessage
	postOK(t, url+"/threads/v1/history", `{}`, &hist)
	if len(hist) != 5 {
		t.Fatalf("history: %d checkpoints, want 5", len(hist))
	}
	metaByID := map[string]string{}
	for i, raw := range hist {
		e := viewOf(t, raw)
		metaByID[e.Checkpoint.CheckpointID] = string(mustJSON(t, e.Metadata))
		if e.Metadata["assistant_id"] != as.AssistantID || e.Metadata["source_app"] != "test" {
			t.Errorf("history %d: metadata %v, want the run's assistant and metadata", i, e.Metadata)
		}
		var at json.RawMessage // a derived id has its step bits' top bit set
		if code := getJSON(t, url+"/threads/v1/state/"+e.Checkpoint.CheckpointID, &at); code != http.StatusOK || !sameView(t, at, raw, e.Checkpoint.CheckpointID[24] < '8') {
			t.Errorf("getState at history %d (%s): %d\n%s\nhistory has\n%s", i, e.Checkpoint.CheckpointID, code, at, raw)
		}
	}
	var head json.RawMessage
	if getJSON(t, url+"/threads/v1/state", &head); !sameView(t, head, hist[0], true) {
		t.Errorf("getState:\n%s\nhistory's newest:\n%s", head, hist[0])
	}
	for _, p := range parts {
		if p.Type != "checkpoints" {
			continue
		}
		e := viewOf(t, p.Data)
		if want := metaByID[e.Checkpoint.CheckpointID]; string(mustJSON(t, e.Metadata)) != want {
			t.Errorf("streamed checkpoint %s: metadata %s, history has %s", e.Checkpoint.CheckpointID, mustJSON(t, e.Metadata), want)
		}
	}
}

// stateView is the part of a checkpoint these tests compare.
type stateView struct {
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	Parent   json.RawMessage `json:"parent_checkpoint"`
	Values   json.RawMessage `json:"values"`
	Metadata map[string]any  `json:"metadata"`
}

func viewOf(t *testing.T, raw json.RawMessage) stateView {
	t.Helper()
	var v stateView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// sameView reports whether getState's got shows history's want: the
// same JSON, or for a stored checkpoint the same checkpoint, values and
// metadata but for Dawn's step and source (its parent is Dawn's too: the
// stored checkpoint before it).
func sameView(t *testing.T, got, want json.RawMessage, stored bool) bool {
	t.Helper()
	if !stored {
		return sameJSON(t, got, want)
	}
	g, w := viewOf(t, got), viewOf(t, want)
	g.Parent, w.Parent = nil, nil
	for _, k := range []string{"step", "source"} {
		delete(g.Metadata, k)
		delete(w.Metadata, k)
	}
	return string(mustJSON(t, g)) == string(mustJSON(t, w))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return string(mustJSON(t, x)) == string(mustJSON(t, y))
}
