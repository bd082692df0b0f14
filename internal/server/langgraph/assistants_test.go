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

// TestAssistantGraphIDIsGraphName: graph_id shows a route as LangGraph
// names graphs, without the leading "/", on default and created
// assistants alike, whichever way the client named it; a search by
// either name finds them all, and the schemas name the same graph.
func TestAssistantGraphIDIsGraphName(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	type lgAssistant struct {
		AssistantID string `json:"assistant_id"`
		GraphID     string `json:"graph_id"`
	}
	for _, name := range []string{"support/[tenant]", "/support/[tenant]"} {
		var created lgAssistant
		resp := post(t, url+"/assistants", `{"graph_id":"`+name+`"}`)
		if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != 200 {
			t.Fatalf("create with graph_id %q: %d %v", name, resp.StatusCode, err)
		}
		resp.Body.Close()
		if created.GraphID != "support/[tenant]" {
			t.Errorf("created with graph_id %q: graph_id %q, want support/[tenant]", name, created.GraphID)
		}
		var got lgAssistant
		if getJSON(t, url+"/assistants/"+created.AssistantID, &got); got.GraphID != "support/[tenant]" {
			t.Errorf("GET of an assistant created as %q: graph_id %q", name, got.GraphID)
		}
	}
	for _, name := range []string{"support/[tenant]", "/support/[tenant]"} {
		var found []lgAssistant
		resp := post(t, url+"/assistants/search", `{"graph_id":"`+name+`"}`)
		_ = json.NewDecoder(resp.Body).Decode(&found)
		resp.Body.Close()
		if len(found) != 3 {
			t.Fatalf("search by graph_id %q: %+v, want the default and the two created", name, found)
		}
		for _, as := range found {
			if as.GraphID != "support/[tenant]" {
				t.Errorf("search by graph_id %q: %+v", name, as)
			}
		}
	}
	var schemas struct {
		GraphID string `json:"graph_id"`
	}
	if getJSON(t, url+"/assistants/support%2F%5Btenant%5D/schemas", &schemas); schemas.GraphID != "support/[tenant]" {
		t.Errorf("schemas graph_id %q", schemas.GraphID)
	}
}

// TestSchemasMarkMessages: a route's schemas mark its messages channel
// with langgraph_type "messages", as LangGraph marks a messages channel,
// and no state.yaml field, array or not.
func TestSchemasMarkMessages(t *testing.T) {
	app := writeApp(t, map[string]string{
		"agent/agent.md":   "You count.",
		"agent/state.yaml": "count:\n  type: number\n  default: 0\nnotes:\n  type: array\n",
	})
	h := apptest.New(t, app, dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	var schemas struct {
		State  struct{ Properties map[string]map[string]any } `json:"state_schema"`
		Input  struct{ Properties map[string]map[string]any } `json:"input_schema"`
		Output struct{ Properties map[string]map[string]any } `json:"output_schema"`
	}
	getJSON(t, url+"/assistants/agent/schemas", &schemas)
	for which, props := range map[string]map[string]map[string]any{"state_schema": schemas.State.Properties, "input_schema": schemas.Input.Properties, "output_schema": schemas.Output.Properties} {
		if got := props["messages"]["langgraph_type"]; got != "messages" {
			t.Errorf("%s messages: langgraph_type %v, want messages", which, got)
		}
		for name, p := range props {
			if _, ok := p["langgraph_type"]; ok && name != "messages" {
				t.Errorf("%s field %s is marked %v", which, name, p["langgraph_type"])
			}
		}
		if props["notes"] == nil || props["count"] == nil {
			t.Errorf("%s has no state.yaml field notes: %v", which, props)
		}
	}
}

// TestSchemasListSettableKeys: config_schema is the schema of
// config.configurable, as LangGraph's is, and it and context_schema list
// what a run of the route may set: model, temperature, tools (the
// route's, by name) and the route's params.
func TestSchemasListSettableKeys(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	type schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	var schemas struct {
		Config  schema `json:"config_schema"`
		Context schema `json:"context_schema"`
	}
	getJSON(t, url+"/assistants/support%2F%5Btenant%5D/schemas", &schemas)
	for which, s := range map[string]schema{"config_schema": schemas.Config, "context_schema": schemas.Context} {
		for _, key := range []string{"model", "temperature", "tools", "tenant"} {
			if s.Properties[key] == nil {
				t.Errorf("%s has no %s: %v", which, key, s.Properties)
			}
		}
		if len(s.Properties) != 4 {
			t.Errorf("%s: %v, want model, temperature, tools and tenant only", which, s.Properties)
		}
		items, _ := s.Properties["tools"]["items"].(map[string]any)
		if enum, _ := items["enum"].([]any); len(enum) != 1 || enum[0] != "writeTodos" {
			t.Errorf("%s tools items %v, want the route's tools [writeTodos]", which, items)
		}
	}
}
