//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// settingsModel is an OpenAI chat-completions server that keeps what each
// request asked for (model, temperature, tool names). Until the test
// frees it, every request is held until its caller goes away; once freed,
// a request with no tool result yet calls writeTodos, and any other is
// answered with text.
type settingsModel struct {
	mu       sync.Mutex
	seen     []modelAsk
	arrived  chan struct{}
	released chan struct{}
	once     sync.Once
}

// modelAsk is what one model request asked for.
type modelAsk struct {
	Model       string
	Temperature *float64
	Tools       []string
}

func (m *settingsModel) free() { m.once.Do(func() { close(m.released) }) }

func (m *settingsModel) asks() []modelAsk {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.seen)
}

func (m *settingsModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body struct {
		Model       string        `json:"model"`
		Temperature *float64      `json:"temperature"`
		Stream      bool          `json:"stream"`
		Messages    []wireMessage `json:"messages"`
		Tools       []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(data, &body)
	ask := modelAsk{Model: body.Model, Temperature: body.Temperature}
	for _, t := range body.Tools {
		ask.Tools = append(ask.Tools, t.Function.Name)
	}
	m.mu.Lock()
	m.seen = append(m.seen, ask)
	n := len(m.seen)
	m.mu.Unlock()
	select {
	case m.arrived <- struct{}{}:
	default:
	}
	select {
	case <-m.released:
	case <-r.Context().Done():
		return
	}
	if !slices.ContainsFunc(body.Messages, func(m wireMessage) bool { return m.Role == "tool" }) {
		writeChat(w, body.Stream, fmt.Sprintf("call_%d", n), "writeTodos", `{"todos":[{"content":"Written by the model","status":"completed"}]}`, "")
		return
	}
	writeChat(w, body.Stream, "", "", "", "Finished.")
}

// TestContinuedRunKeepsItsSettings: two `dawn start` replicas with runs:
// {continue_orphans: true} share one Postgres. A LangGraph run started on
// replica A with config.configurable (a model, a temperature, a tool
// allow-list) and interrupt_before ["tools"] is cut off by a SIGKILL of A
// in its model call; replica B continues it. B's model call asks for the
// run's model and temperature with only the allowed tool, and the pause
// the client asked for holds: the run parks before its tool call runs.
func TestContinuedRunKeepsItsSettings(t *testing.T) {
	dsn := pgtest.Database(t)
	model := &settingsModel{arrived: make(chan struct{}, 16), released: make(chan struct{})}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	t.Cleanup(model.free)
	dir := writeApp(t, map[string]string{
		"dawn.yaml":    "runs:\n  continue_orphans: true\n",
		"cfg/agent.md": "---\ndescription: Runs with the settings its client asks for.\nmodel: openai:gpt-route\nworkspace: thread\n---\nAnswer.\n",
		"cfg/plan.md":  "- [ ] Seeded\n",
	})
	reps := startReplicas(t, 2, dir, dsn, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"})
	a, b := newClient(reps[0].url), newClient(reps[1].url)
	t.Cleanup(a.close)
	t.Cleanup(b.close)

	body, _ := json.Marshal(map[string]any{
		"assistant_id":     "/cfg",
		"if_not_exists":    "create",
		"input":            map[string]any{"messages": []map[string]string{{"type": "human", "content": "Plan it."}}},
		"config":           map[string]any{"configurable": map[string]any{"model": "openai:gpt-run", "temperature": 0.25, "tools": []string{"writeTodos"}}},
		"interrupt_before": []string{"tools"},
	})
	r := a.must(t, http.MethodPost, "/threads/kept/runs", body)
	var run lgRunObject
	if r.status != http.StatusOK || json.Unmarshal(r.body, &run) != nil || run.RunID == "" {
		t.Fatalf("POST /threads/kept/runs on replica A = %d %s, want 200 with a run", r.status, r.body)
	}
	select {
	case <-model.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not reach the model within 30s")
	}
	want := modelAsk{Model: "gpt-run", Temperature: new(0.25), Tools: []string{"writeTodos"}}
	checkAsk(t, "replica A, before the kill", model.asks()[0], want)
	reps[0].kill()
	model.free()

	logs := func() string { return "replica B:\n" + reps[1].logs.String() }
	if st := waitThreadSettled(t, b, "kept", logs); st != "interrupted" {
		t.Errorf("the continued run left its thread %s, want interrupted: interrupt_before must park it before its tool call", st)
	}
	asks := model.asks()
	if len(asks) < 2 {
		t.Fatalf("the model had %d requests, want A's, cut off, and B's: %+v\n%s", len(asks), asks, logs())
	}
	checkAsk(t, "replica B, continuing the run", asks[1], want)

	var state struct {
		Values struct {
			Todos []struct {
				Content string `json:"content"`
			} `json:"todos"`
		} `json:"values"`
		Next []string `json:"next"`
	}
	b.getJSON(t, "/threads/kept/state", &state)
	if !slices.Equal(state.Next, []string{"tools"}) {
		t.Errorf("the continued run's thread has next %q, want [tools]: interrupt_before must park it before its tool call", state.Next)
	}
	if len(state.Values.Todos) != 1 || state.Values.Todos[0].Content != "Seeded" {
		t.Errorf("todos are %+v, want the seed only: the paused tool call must not have run", state.Values.Todos)
	}
}

// checkAsk checks that a model request asked for want.
func checkAsk(t *testing.T, who string, got, want modelAsk) {
	t.Helper()
	if got.Model != want.Model {
		t.Errorf("%s: the model request names model %q, want %q (config.configurable.model)", who, got.Model, want.Model)
	}
	if got.Temperature == nil || *got.Temperature != *want.Temperature {
		t.Errorf("%s: the model request has temperature %v, want %v (config.configurable.temperature)", who, fmtTemp(got.Temperature), *want.Temperature)
	}
	if !slices.Equal(got.Tools, want.Tools) {
		t.Errorf("%s: the model request offers tools %q, want only %q (config.configurable.tools)", who, got.Tools, want.Tools)
	}
}

func fmtTemp(t *float64) string {
	if t == nil {
		return "none"
	}
	return fmt.Sprint(*t)
}

// waitThreadSettled polls the LangGraph thread th through c until it is
// no longer busy, and returns its status.
func waitThreadSettled(t *testing.T, c *client, th string, logs func() string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got struct {
			Status string `json:"status"`
		}
		c.getJSON(t, "/threads/"+th, &got)
		if got.Status != "busy" {
			return got.Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s is still busy 30s after its server was killed\n%s", th, logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
