package langgraph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// TestEnvConfigDefaultAssistants: LANGGRAPH_CONFIG gives the default
// assistants of the graphs it names their config and context, as
// LangGraph's server does; a run of such an assistant uses them, and an
// entry the route does not allow refuses its runs naming the variable
// and the field.
func TestEnvConfigDefaultAssistants(t *testing.T) {
	app := writeApp(t, map[string]string{
		"agent/agent.md": "---\nmodel: openai:gpt-route\n---\nYou help.",
		"other/agent.md": "---\nmodel: openai:gpt-route\n---\nYou help too.",
		"plain/agent.md": "---\nmodel: openai:gpt-route\n---\nYou help as written.",
	})
	env := map[string]string{"LANGGRAPH_CONFIG": `{"agent": {"configurable": {"model": "openai:gpt-env", "model_name": "openai"}}, "/other": {"context": {"model": "unknown"}}}`}
	var mu sync.Mutex
	var specs []string
	models := func(spec string) (llms.Model, error) {
		mu.Lock()
		specs = append(specs, spec)
		mu.Unlock()
		return dawntest.Script().Reply("done"), nil
	}
	h := apptest.New(t, app, nil, apptest.Options{Models: models, Env: func(k string) string { return env[k] }})
	url := h.Serve(t)

	var found []struct {
		GraphID string         `json:"graph_id"`
		Config  map[string]any `json:"config"`
		Context map[string]any `json:"context"`
	}
	resp := post(t, url+"/assistants/search", `{"metadata":{"created_by":"system"}}`)
	_ = json.NewDecoder(resp.Body).Decode(&found)
	resp.Body.Close()
	byGraph := map[string]string{}
	for _, as := range found {
		byGraph[as.GraphID] = string(must(json.Marshal(as.Config))) + " " + string(must(json.Marshal(as.Context)))
	}
	want := map[string]string{
		"agent": `{"configurable":{"model":"openai:gpt-env","model_name":"openai"}} {}`,
		"other": `{"configurable":{}} {"model":"unknown"}`,
		"plain": `{"configurable":{}} {}`,
	}
	for g, w := range want {
		if byGraph[g] != w {
			t.Errorf("default assistant of %s: config and context %s, want %s", g, byGraph[g], w)
		}
	}

	for _, g := range []string{"agent", "plain"} {
		resp := post(t, url+"/runs/wait", lgBody(g, "hi", nil))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("run of %s: %d %s", g, resp.StatusCode, body)
		}
	}
	mu.Lock()
	if got := strings.Join(specs, ","); got != "openai:gpt-env,openai:gpt-route" {
		t.Errorf("models the runs of agent and plain used: %s, want openai:gpt-env then the route's openai:gpt-route", got)
	}
	mu.Unlock()

	resp = post(t, url+"/runs/wait", lgBody("other", "hi", nil))
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, "LANGGRAPH_CONFIG.other.context.model") {
		t.Errorf("run of other, whose LANGGRAPH_CONFIG model is no model: %d %+v, want 400 naming LANGGRAPH_CONFIG.other.context.model", resp.StatusCode, e)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
