package langgraph_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
)

// TestLangGraphNodeCheckpoints: a run whose model calls a tool, then
// answers, is LangGraph's prebuilt agent graph agent → tools → agent: its
// history has a checkpoint per node (the input, the input applied, after
// the model, after the tools, after the answer), each with its step, next
// nodes and parent, and getState reads each; a page of history starts
// after any of them.
func TestLangGraphNodeCheckpoints(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("A1").Reply("A2")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"n1"}`, nil)
	postOK(t, url+"/threads/n1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)

	hist := history(t, url, "n1")
	if len(hist) != 5 {
		t.Fatalf("history of agent → tools → agent: %d checkpoints, want 5", len(hist))
	}
	wantNext := [][]string{{}, {"agent"}, {"tools"}, {"agent"}, {"__start__"}}
	wantMsgs := []int{4, 3, 2, 1, 0}
	for i, k := range hist {
		if !slices.Equal(k.Next, wantNext[i]) || len(k.Values.Messages) != wantMsgs[i] || k.Metadata.Step != 3-i {
			t.Errorf("checkpoint %d: next %v, %d messages, step %d; want %v, %d, %d", i, k.Next, len(k.Values.Messages), k.Metadata.Step, wantNext[i], wantMsgs[i], 3-i)
		}
		if i+1 < len(hist) && (k.ParentCheckpoint == nil || k.ParentCheckpoint.CheckpointID != hist[i+1].Checkpoint.CheckpointID) {
			t.Errorf("checkpoint %d's parent is not the one before it", i)
		}
		var st kept
		if status := getJSON(t, url+"/threads/n1/state/"+k.Checkpoint.CheckpointID, &st); status != http.StatusOK || len(st.Values.Messages) != wantMsgs[i] || st.Checkpoint.CheckpointID != k.Checkpoint.CheckpointID {
			t.Errorf("getState at checkpoint %d: status %d, %d messages, id %s", i, status, len(st.Values.Messages), st.Checkpoint.CheckpointID)
		}
	}
	if hist[4].Metadata.Source != "input" || hist[3].Metadata.Source != "loop" {
		t.Errorf("sources %q, %q: want the input, then the loop", hist[4].Metadata.Source, hist[3].Metadata.Source)
	}
	if calls := hist[2].Values.Messages[1].ToolCalls; len(calls) != 1 || calls[0].Name != "writeTodos" {
		t.Errorf("after the model: %+v, want its tool call last", hist[2].Values.Messages)
	}
	ids := map[string]bool{}
	for _, k := range hist {
		ids[k.Checkpoint.CheckpointID] = true
	}
	if len(ids) != 5 {
		t.Errorf("%d distinct checkpoint ids, want 5", len(ids))
	}

	// A page starts after any checkpoint, derived or kept.
	for i := range 4 {
		var page []kept
		postOK(t, url+"/threads/n1/history", `{"limit":2,"before":"`+hist[i].Checkpoint.CheckpointID+`"}`, &page)
		if len(page) != min(2, 4-i) || page[0].Checkpoint.CheckpointID != hist[i+1].Checkpoint.CheckpointID {
			t.Errorf("the page before checkpoint %d: %d checkpoints", i, len(page))
		}
	}

	// A second run's input shows the first run's end; ten in all.
	postOK(t, url+"/threads/n1/runs/wait", lgBody("/support/acme", "Q2", nil), nil)
	hist = history(t, url, "n1")
	if len(hist) != 8 || hist[2].Metadata.Source != "input" || len(hist[2].Values.Messages) != 4 || hist[2].ParentCheckpoint.CheckpointID != hist[3].Checkpoint.CheckpointID {
		t.Errorf("after a second run: %d checkpoints", len(hist))
	}

	// An id with the derived mark of a checkpoint the thread lacks.
	missing := strings.Replace(hist[4].Checkpoint.CheckpointID, hist[4].Checkpoint.CheckpointID[24:], "800000000063", 1)
	if status := getJSON(t, url+"/threads/n1/state/"+missing, nil); status != http.StatusNotFound {
		t.Errorf("getState at %s: status %d, want 404", missing, status)
	}
}

// TestLangGraphStreamedCheckpointsAreHistory: the checkpoints a run
// streams in the debug mode are the ones its thread's history shows
// afterwards, with the same ids, parents and steps, for a thread's first
// run and for the next one.
func TestLangGraphStreamedCheckpointsAreHistory(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("A1").CallTool("writeTodos", fourTodos(2)).Reply("A2").Reply("A3")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"d1"}`, nil)
	type ref struct {
		Step       int             `json:"step"`
		Checkpoint json.RawMessage `json:"checkpoint"`
		Parent     json.RawMessage `json:"parent_checkpoint"`
	}
	checkpointsOf := func(parts []stream.Event) []ref {
		var streamed []ref
		for _, p := range parts {
			var debug struct {
				Type    string `json:"type"`
				Payload struct {
					Metadata struct {
						Step int `json:"step"`
					} `json:"metadata"`
					Checkpoint json.RawMessage `json:"checkpoint"`
					Parent     json.RawMessage `json:"parent_checkpoint"`
				} `json:"payload"`
			}
			if p.Type == "debug" && json.Unmarshal(p.Data, &debug) == nil && debug.Type == "checkpoint" {
				streamed = append(streamed, ref{debug.Payload.Metadata.Step, debug.Payload.Checkpoint, debug.Payload.Parent})
			}
		}
		return streamed
	}
	for _, q := range []string{"Q1", "Q2"} {
		resp := post(t, url+"/threads/d1/runs/stream", lgBody("/support/acme", q, map[string]any{"stream_mode": "debug"}))
		run := resp.Header.Get("Content-Location")
		streamed := checkpointsOf(readLG(t, resp))
		// A replay of the ended run streams the same checkpoints.
		replay, err := http.Get(url + run + "/stream?stream_mode=debug&cancel_on_disconnect=false")
		if err != nil {
			t.Fatal(err)
		}
		if again := checkpointsOf(readLG(t, replay)); string(wire.MustJSON(again)) != string(wire.MustJSON(streamed)) {
			t.Errorf("run %s replayed checkpoints\n%s\nstreamed\n%s", q, wire.MustJSON(again), wire.MustJSON(streamed))
		}
		var hist []struct {
			Metadata struct {
				Step int `json:"step"`
			} `json:"metadata"`
			Checkpoint json.RawMessage `json:"checkpoint"`
			Parent     json.RawMessage `json:"parent_checkpoint"`
		}
		postOK(t, url+"/threads/d1/history", `{"limit":`+strconv.Itoa(len(streamed))+`}`, &hist)
		var kept []ref
		for i := len(hist) - 1; i >= 0; i-- {
			kept = append(kept, ref{hist[i].Metadata.Step, hist[i].Checkpoint, hist[i].Parent})
		}
		if len(streamed) != 5 || string(wire.MustJSON(streamed)) != string(wire.MustJSON(kept)) {
			t.Errorf("run %s streamed checkpoints\n%s\nhistory has\n%s", q, wire.MustJSON(streamed), wire.MustJSON(kept))
		}
	}

	// A run without input keeps no checkpoint for it: its input
	// checkpoints are streamed without ids, its answer with the id and
	// parent history shows.
	var ids []string
	for _, p := range readLG(t, post(t, url+"/threads/d1/runs/stream", `{"assistant_id":"/support/acme","input":{"messages":[]},"stream_mode":"checkpoints"}`)) {
		var cp struct {
			Checkpoint *struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
			Parent *struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"parent_checkpoint"`
		}
		if p.Type == "checkpoints" && json.Unmarshal(p.Data, &cp) == nil && cp.Checkpoint != nil {
			ids = append(ids, cp.Checkpoint.CheckpointID, cp.Parent.CheckpointID)
		}
	}
	hist := history(t, url, "d1")
	if want := []string{hist[0].Checkpoint.CheckpointID, hist[1].Checkpoint.CheckpointID}; !slices.Equal(ids, want) {
		t.Errorf("a run without input streamed checkpoint ids %v, want %v (its answer and its parent)", ids, want)
	}
}

// TestLangGraphForkAfterModel: a run with input null from the checkpoint
// after a model turn that called a tool runs the held-back call first, as
// LangGraph's tools node runs next from there, then the model answers
// again; a run from before a run's input starts from the state before it.
func TestLangGraphForkAfterModel(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("A1").Reply("A1 again").Reply("A2").Reply("A2 edited")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"k1"}`, nil)
	postOK(t, url+"/threads/k1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)
	hist := history(t, url, "k1")
	if len(hist) != 5 || !slices.Equal(hist[2].Next, []string{"tools"}) {
		t.Fatalf("history: %d checkpoints", len(hist))
	}
	var out runOutput
	postOK(t, url+"/threads/k1/runs/wait", `{"assistant_id":"/support/acme","input":null,"checkpoint":{"checkpoint_id":"`+hist[2].Checkpoint.CheckpointID+`"}}`, &out)
	var contents []string
	for _, m := range out.Messages {
		contents = append(contents, m.Type+":"+m.Content)
	}
	if len(out.Messages) != 4 || out.Messages[1].ID != hist[2].Values.Messages[1].ID || out.Messages[2].Type != "tool" || contents[3] != "ai:A1 again" || len(out.Todos) != 4 {
		t.Errorf("a run from after the model's turn: %q, todos %+v", contents, out.Todos)
	}

	// Before the first run's input there is nothing to start from; before
	// the second's, the first's end.
	postOK(t, url+"/threads/k1/runs/wait", lgBody("/support/acme", "Q2", nil), nil)
	hist = history(t, url, "k1")
	var edited runOutput
	postOK(t, url+"/threads/k1/runs/wait", lgBody("/support/acme", "Q2 edited", map[string]any{"checkpoint": map[string]string{"checkpoint_id": hist[2].Checkpoint.CheckpointID}}), &edited)
	if n := len(edited.Messages); n != 6 || edited.Messages[4].Content != "Q2 edited" || edited.Messages[5].Content != "A2 edited" {
		t.Errorf("a run from before an input: %+v", edited.Messages)
	}
	if kind := errorKind(t, post(t, url+"/threads/k1/runs/wait", lgBody("/support/acme", "Q0", map[string]any{"checkpoint_id": hist[len(hist)-1].Checkpoint.CheckpointID})), http.StatusBadRequest); !strings.Contains(kind, "first run") {
		t.Errorf("a run from before the thread's first input: %s", kind)
	}
}

// TestLangGraphRunMetadataInHistory: the metadata a run was started with
// is in the metadata of its checkpoints, so history filters by it.
func TestLangGraphRunMetadataInHistory(t *testing.T) {
	model := dawntest.Script().Reply("A1").CallTool("writeTodos", fourTodos(1)).Reply("A2")
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: t.TempDir() + "/dawn.db"})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"m1"}`, nil)
	postOK(t, url+"/threads/m1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)
	postOK(t, url+"/threads/m1/runs/wait", lgBody("/support/acme", "Q2", map[string]any{"metadata": map[string]string{"run_metadata": "second"}}), nil)
	var filtered []kept
	postOK(t, url+"/threads/m1/history", `{"metadata":{"run_metadata":"second"}}`, &filtered)
	if len(filtered) != 5 || len(filtered[4].Values.Messages) != 2 || filtered[4].Metadata.Source != "input" {
		t.Errorf("history of the run with the metadata: %d checkpoints, want its 5", len(filtered))
	}
	var all []kept
	postOK(t, url+"/threads/m1/history", `{}`, &all)
	if len(all) != 8 {
		t.Errorf("history: %d checkpoints, want 8", len(all))
	}
}

// TestLangGraphParkedAfterModel: a run parked after the model's turn
// (interrupt_after ["agent"]) streams the checkpoint after the model with
// the derived id; that id reads the parked step, and a run with input
// null from it runs the held-back call.
func TestLangGraphParkedAfterModel(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("A1")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"p1"}`, nil)
	var streamed []string
	for _, p := range readLG(t, post(t, url+"/threads/p1/runs/stream", lgBody("/support/acme", "Q1", map[string]any{"stream_mode": "checkpoints", "interrupt_after": []string{"agent"}}))) {
		var cp struct {
			Next       []string `json:"next"`
			Checkpoint *struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		if p.Type == "checkpoints" && json.Unmarshal(p.Data, &cp) == nil && cp.Checkpoint != nil && slices.Equal(cp.Next, []string{"tools"}) {
			streamed = append(streamed, cp.Checkpoint.CheckpointID)
		}
	}
	if len(streamed) == 0 {
		t.Fatal("no checkpoint after the model was streamed")
	}
	for _, id := range streamed {
		var st kept
		if status := getJSON(t, url+"/threads/p1/state/"+id, &st); status != http.StatusOK || len(st.Values.Messages) != 2 {
			t.Errorf("getState at streamed checkpoint %s: status %d, %d messages", id, status, len(st.Values.Messages))
		}
	}
	var out runOutput
	postOK(t, url+"/threads/p1/runs/wait", `{"assistant_id":"/support/acme","input":null,"checkpoint_id":"`+streamed[0]+`"}`, &out)
	if n := len(out.Messages); n != 4 || out.Messages[2].Type != "tool" || out.Messages[3].Content != "A1" {
		t.Errorf("a run from the parked checkpoint: %+v", out.Messages)
	}
}
