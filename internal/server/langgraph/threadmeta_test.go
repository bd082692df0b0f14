package langgraph_test

import (
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestRunStampsThreadMetadata: a LangGraph run sets graph_id and
// assistant_id in its thread's metadata, keeping the thread's other
// keys, as LangGraph does, so that a thread list searched by either (as
// LangGraph's chat UIs search) finds the thread, and deleting the
// assistant with its threads deletes it. A thread a run creates gets
// them too; a run of Dawn's own wire sets nothing.
func TestRunStampsThreadMetadata(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2").Reply("A3").Reply("A4"), apptest.Options{})
	url := h.Serve(t)
	var as struct {
		AssistantID string `json:"assistant_id"`
	}
	postOK(t, url+"/assistants", `{"graph_id":"support/[tenant]","name":"acme desk","config":{"configurable":{"tenant":"acme"}}}`, &as)
	type lgThread struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
	}
	postOK(t, url+"/threads", `{"thread_id":"m1","metadata":{"name":"kept"}}`, nil)
	postOK(t, url+"/threads/m1/runs/wait", lgBody(as.AssistantID, "Q1", nil), nil)
	var got lgThread
	getJSON(t, url+"/threads/m1", &got)
	if got.Metadata["name"] != "kept" || got.Metadata["graph_id"] != "support/[tenant]" || got.Metadata["assistant_id"] != as.AssistantID {
		t.Errorf("metadata after a run: %v, want name kept, graph_id support/[tenant], assistant_id %s", got.Metadata, as.AssistantID)
	}

	// A run that creates its thread; then a run of the route's default
	// assistant on it names that assistant.
	postOK(t, url+"/threads/m2/runs/wait", `{"assistant_id":"`+as.AssistantID+`","input":{"messages":[{"type":"human","content":"Q2"}]},"if_not_exists":"create"}`, nil)
	for _, filter := range []string{`{"assistant_id":"` + as.AssistantID + `"}`, `{"graph_id":"support/[tenant]"}`} {
		var found []lgThread
		postOK(t, url+"/threads/search", `{"metadata":`+filter+`}`, &found)
		if len(found) != 2 {
			t.Errorf("threads with metadata %s: %d, want m1 and m2", filter, len(found))
		}
	}
	var def struct {
		AssistantID string `json:"assistant_id"`
	}
	getJSON(t, url+"/assistants/support%2F%5Btenant%5D", &def)
	postOK(t, url+"/threads/m2/runs/wait", lgBody("/support/acme", "Q3", nil), nil)
	var m2 lgThread
	getJSON(t, url+"/threads/m2", &m2)
	if m2.Metadata["assistant_id"] != def.AssistantID {
		t.Errorf("after a run of the default assistant: %v, want assistant_id %s", m2.Metadata, def.AssistantID)
	}

	// Dawn's own wire names no assistant.
	postOK(t, url+"/threads", `{"thread_id":"m3"}`, nil)
	resp := post(t, url+"/threads/m3/runs/wait", runBody("/support/acme", "Q4"))
	resp.Body.Close()
	var m3 lgThread
	getJSON(t, url+"/threads/m3", &m3)
	if resp.StatusCode != http.StatusOK || len(m3.Metadata) != 0 {
		t.Errorf("after a run of Dawn's wire: %d, metadata %v, want none", resp.StatusCode, m3.Metadata)
	}

	// Deleting the assistant with its threads deletes the thread its run
	// stamped.
	req, _ := http.NewRequest(http.MethodDelete, url+"/assistants/"+as.AssistantID+"?delete_threads=true", nil)
	del, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if code := getJSON(t, url+"/threads/m1", nil); del.StatusCode != http.StatusOK || code != http.StatusNotFound {
		t.Errorf("delete with threads: %d, then GET /threads/m1: %d, want 404", del.StatusCode, code)
	}
}
