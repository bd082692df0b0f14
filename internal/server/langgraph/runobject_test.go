package langgraph_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestRunObjectFromAnotherServer: a run read back through another server
// sharing the store (a replica behind a load balancer, or the same one
// after a restart) shows what it was started with: its assistant, its
// metadata, its multitask strategy and its kwargs, not the route's
// default assistant and empty metadata.
func TestRunObjectFromAnotherServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dawn.db")
	one := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1"), apptest.Options{StorePath: path})
	two := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{StorePath: path})
	url1, url2 := one.Serve(t), two.Serve(t)
	var as struct {
		AssistantID string `json:"assistant_id"`
	}
	postOK(t, url1+"/assistants", `{"graph_id":"support/[tenant]","name":"acme desk","config":{"configurable":{"tenant":"acme"}}}`, &as)
	postOK(t, url1+"/threads", `{"thread_id":"o1"}`, nil)
	type runObject struct {
		RunID             string          `json:"run_id"`
		AssistantID       string          `json:"assistant_id"`
		Status            string          `json:"status"`
		Metadata          json.RawMessage `json:"metadata"`
		MultitaskStrategy string          `json:"multitask_strategy"`
		Kwargs            json.RawMessage `json:"kwargs"`
	}
	var started runObject
	postOK(t, url1+"/threads/o1/runs", lgBody(as.AssistantID, "Q1", map[string]any{"metadata": map[string]any{"source": "test"}, "multitask_strategy": "reject"}), &started)
	getJSON(t, url1+"/threads/o1/runs/"+started.RunID+"/join", nil)
	var here runObject
	getJSON(t, url1+"/threads/o1/runs/"+started.RunID, &here)
	if here.AssistantID != as.AssistantID || string(here.Metadata) != `{"source":"test"}` || here.MultitaskStrategy != "reject" {
		t.Fatalf("the run on its own server: %+v", here)
	}
	var there runObject
	getJSON(t, url2+"/threads/o1/runs/"+started.RunID, &there)
	if there.AssistantID != here.AssistantID || string(there.Metadata) != string(here.Metadata) || there.MultitaskStrategy != here.MultitaskStrategy ||
		string(there.Kwargs) != string(here.Kwargs) || there.Status != "success" {
		t.Errorf("the run through another server:\n%+v\nwant as on its own:\n%+v", there, here)
	}
}
