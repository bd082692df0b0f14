package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestAimockStockBinary runs the whole product: the stock dawn binary serves
// a route on openai:gpt-4o-mini with OPENAI_BASE_URL pointed at aimock, and
// a client speaks to it over real HTTP and SSE.
func TestAimockStockBinary(t *testing.T) {
	mock := startAimock(t, "testdata/plan_then_answer.json")
	bin := buildDawn(t)
	url := startDawn(t, bin, supportApp(t), "OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=")
	checkPlanThenAnswer(t, url, mock)
}

// TestAimockInProcess runs the same flow on the in-process harness, with the
// real models.New talking to aimock.
func TestAimockInProcess(t *testing.T) {
	mock := startAimock(t, "testdata/plan_then_answer.json")
	url := serveInProcess(t, mock+"/v1")
	checkPlanThenAnswer(t, url, mock)
}

// TestModelUnreachable points OPENAI_BASE_URL at a closed port: runs/wait
// answers 502 model_error naming the address, and runs/stream ends with an
// error done event.
func TestModelUnreachable(t *testing.T) {
	base := "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/v1"
	url := serveInProcess(t, base)

	resp := postJSON(t, url+"/threads/down/runs/wait", runBody("/support/acme"))
	e := decodeAPIError(t, resp)
	if resp.StatusCode != http.StatusBadGateway || e.Kind != "model_error" {
		t.Fatalf("runs/wait: status %d kind %q (%s), want 502 model_error", resp.StatusCode, e.Kind, e.Message)
	}
	if !strings.Contains(e.Message, base) {
		t.Errorf("message %q does not name the base URL %s", e.Message, base)
	}

	events := readEvents(t, postJSON(t, url+"/threads/down2/runs/stream", runBody("/support/acme")))
	last := events[len(events)-1]
	if last.Type != stream.TypeDone || !strings.Contains(string(last.Data), `"error"`) || !strings.Contains(string(last.Data), base) {
		t.Fatalf("last event = %s %s, want done with an error naming %s", last.Type, last.Data, base)
	}
}

// serveInProcess serves supportApp through dawntest with real models whose
// OpenAI base URL is base, and returns the API's URL.
func serveInProcess(t *testing.T, base string) string {
	env := map[string]string{models.EnvOpenAIBaseURL: base, models.EnvOpenAIKey: "test"}
	h := dawntest.New(t, supportApp(t), nil, dawntest.Options{
		StorePath: filepath.Join(t.TempDir(), "dawn.db"),
		Models: func(spec string) (llms.Model, error) {
			return models.New(spec, func(k string) string { return env[k] })
		},
	})
	return h.URL
}

// checkPlanThenAnswer drives one streamed run and one waited run on fresh
// threads against the server at url, and checks what aimock at mock saw.
func checkPlanThenAnswer(t *testing.T, url, mock string) {
	t.Helper()
	t.Run("stream", func(t *testing.T) {
		events := readEvents(t, postJSON(t, url+"/threads/e2e-stream/runs/stream", runBody("/support/acme")))
		checkEventOrder(t, events)
		checkPlanUpdate(t, events)
		checkChunks(t, events)
		checkStateTodos(t, url+"/threads/e2e-stream/state")
		// Streaming was on: both model requests asked for a stream.
		reqs := chatRequests(t, mock)
		if len(reqs) != 2 {
			t.Fatalf("aimock got %d chat requests, want 2 (writeTodos, then the answer)", len(reqs))
		}
		for i, req := range reqs {
			if !req.Stream {
				t.Errorf("model request %d was not streamed", i)
			}
		}
	})
	t.Run("wait", func(t *testing.T) {
		resp := postJSON(t, url+"/threads/e2e-wait/runs/wait", runBody("/support/acme"))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			e := decodeAPIError(t, resp)
			t.Fatalf("runs/wait: %d %s: %s", resp.StatusCode, e.Kind, e.Message)
		}
		var values struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Todos []dawntest.Todo `json:"todos"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&values); err != nil {
			t.Fatal(err)
		}
		checkTodos(t, "runs/wait values", values.Todos)
		last := values.Messages[len(values.Messages)-1]
		if last.Role != "assistant" || last.Content != answer {
			t.Errorf("last message = %s %q, want the assistant's %q", last.Role, last.Content, answer)
		}
	})
}

// checkEventOrder wants model_call, tool_call writeTodos, tool_result,
// plan_update, the answer's chunks, its model_call and done, in that order,
// with ids counting from 1.
func checkEventOrder(t *testing.T, events []stream.Event) {
	t.Helper()
	var types []string
	for i, e := range events {
		if e.ID != int64(i+1) {
			t.Errorf("event %d (%s) has id %d, want %d", i, e.Type, e.ID, i+1)
		}
		if e.Type == stream.TypeChunk && len(types) > 0 && types[len(types)-1] == stream.TypeChunk {
			continue
		}
		types = append(types, e.Type)
	}
	want := []string{"model_call", "tool_call", "tool_result", "plan_update", "chunk", "model_call", "done"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("event types (chunks merged) = %v, want %v", types, want)
	}
	var call struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(events[1].Data, &call); err != nil || call.Name != "writeTodos" || call.ID == "" || !strings.Contains(string(call.Input), "in_progress") {
		t.Errorf("tool_call = %s (%v), want writeTodos with an id and the todos", events[1].Data, err)
	}
	var result struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(events[2].Data, &result); err != nil || result.Name != "writeTodos" || result.ID != call.ID {
		t.Errorf("tool_result = %s (%v), want writeTodos with the call's id %s", events[2].Data, err, call.ID)
	}
	if last := events[len(events)-1]; !strings.Contains(string(last.Data), answer) {
		t.Errorf("done = %s, want the final values with the answer", last.Data)
	}
}

func checkPlanUpdate(t *testing.T, events []stream.Event) {
	t.Helper()
	updates := dawntest.PlanUpdates(t, events, "plan_update")
	if len(updates) != 1 {
		t.Fatalf("%d plan_update events, want 1", len(updates))
	}
	checkTodos(t, "plan_update", updates[0])
}

// checkChunks wants the chunks to spell the answer and nothing else: no
// tool-call JSON leaks into the text stream.
func checkChunks(t *testing.T, events []stream.Event) {
	t.Helper()
	var text strings.Builder
	for _, e := range events {
		if e.Type != stream.TypeChunk {
			continue
		}
		var delta string // Dawn's shape: data: "partial text"
		if err := json.Unmarshal(e.Data, &delta); err != nil {
			t.Fatalf("chunk data %s is not a bare JSON string, as Dawn sends it: %v", e.Data, err)
		}
		text.WriteString(delta)
	}
	if text.String() != answer {
		t.Errorf("chunks spell %q, want only the answer %q", text.String(), answer)
	}
}

func checkStateTodos(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Values struct {
			Todos []dawntest.Todo `json:"todos"`
		} `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	checkTodos(t, "thread state", st.Values.Todos)
}

// checkTodos wants the fixture's four todos with the first in progress.
func checkTodos(t *testing.T, where string, todos []dawntest.Todo) {
	t.Helper()
	want := []dawntest.Todo{
		{Content: "Understand the customer request", Status: "in_progress"},
		{Content: "Check account context", Status: "pending"},
		{Content: "Decide whether to answer or escalate", Status: "pending"},
		{Content: "Write the final response", Status: "pending"},
	}
	if fmt.Sprint(todos) != fmt.Sprint(want) {
		t.Errorf("%s todos = %+v, want %+v", where, todos, want)
	}
}
