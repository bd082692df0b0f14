package langgraph_test

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestStoredAssistantBehindRootParam: on an app whose root route is a
// dynamic segment (/[site], which matches any one-segment path), a
// stored assistant's id still names the stored assistant, not the route
// with its id as the param.
func TestStoredAssistantBehindRootParam(t *testing.T) {
	app := writeApp(t, map[string]string{"[site]/agent.md": "You serve {{ .Params.site }}."})
	h := apptest.New(t, app, dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/assistants", `{"graph_id":"[site]","name":"blue site","config":{"configurable":{"site":"blue"}}}`)
	var created struct {
		AssistantID string `json:"assistant_id"`
		Name        string `json:"name"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	var got struct {
		AssistantID string `json:"assistant_id"`
		Name        string `json:"name"`
		Version     int    `json:"version"`
	}
	if code := getJSON(t, url+"/assistants/"+created.AssistantID, &got); code != 200 || got.AssistantID != created.AssistantID || got.Name != "blue site" {
		t.Fatalf("GET /assistants/%s: %d %+v, want the stored assistant", created.AssistantID, code, got)
	}
}
