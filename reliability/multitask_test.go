//go:build unix

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// echoModel is an OpenAI-compatible model for multitask tests. It answers
// "re: TEXT after N answers", TEXT being the last user message and N the
// answers with text it was sent, so that each answer tells what its run
// saw. A user message with [plan] first gets a writeTodos call (a step the
// run saves), and one with [hold:NAME] is answered only once POST
// /gate/NAME opens the gate (or the run's request goes away).
type echoModel struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	// arrived counts the requests held on each gate so far.
	arrived map[string]int
	delay   time.Duration
}

var (
	holdTag = regexp.MustCompile(`\[hold:([A-Za-z0-9_-]+)\]`)
	echoTag = regexp.MustCompile(`\[(hold:[A-Za-z0-9_-]+|plan)\] ?`)
)

// newEchoModel serves an echoModel that waits delay before each answer;
// it returns the model and its base URL (the /v1 API and /gate).
func newEchoModel(t *testing.T, delay time.Duration) (*echoModel, string) {
	m := &echoModel{gates: map[string]chan struct{}{}, arrived: map[string]int{}, delay: delay}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	t.Cleanup(m.openAll) // before srv.Close: a held request would block it
	return m, srv.URL
}

func (m *echoModel) gate(name string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.gates[name]
	if !ok {
		ch = make(chan struct{})
		m.gates[name] = ch
	}
	return ch
}

func (m *echoModel) open(name string) {
	ch := m.gate(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (m *echoModel) openAll() {
	m.mu.Lock()
	var names []string
	for n := range m.gates {
		names = append(names, n)
	}
	m.mu.Unlock()
	for _, n := range names {
		m.open(n)
	}
}

// echoRequest is the part of a chat completion request the model reads.
type echoRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []any           `json:"tool_calls"`
	} `json:"messages"`
}

// text reads a message's content: a string or a list of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (m *echoModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/gate/"); ok {
		m.open(name)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/arrived/"); ok {
		m.mu.Lock()
		n := m.arrived[name]
		m.mu.Unlock()
		fmt.Fprint(w, n)
		return
	}
	var req echoRequest
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &req)
	var last string
	answers, afterTool := 0, false
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			last, afterTool = text(msg.Content), false
		case "assistant":
			if text(msg.Content) != "" {
				answers++
			}
		case "tool":
			afterTool = true
		}
	}
	if strings.Contains(last, "[plan]") && !afterTool {
		m.answer(w, req, "", `{"todos":[{"content":"First","status":"in_progress"},{"content":"Second","status":"pending"}]}`)
		return
	}
	if g := holdTag.FindStringSubmatch(last); g != nil {
		m.mu.Lock()
		m.arrived[g[1]]++
		m.mu.Unlock()
		select {
		case <-m.gate(g[1]):
		case <-r.Context().Done():
			return
		}
	}
	select {
	case <-time.After(m.delay):
	case <-r.Context().Done():
		return
	}
	m.answer(w, req, fmt.Sprintf("re: %s after %d answers", echoTag.ReplaceAllString(last, ""), answers), "")
}

// answer writes a completion with content, or a writeTodos call with
// args, streamed when the request asks.
func (m *echoModel) answer(w http.ResponseWriter, req echoRequest, content, args string) {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if args != "" {
		msg["content"] = nil
		msg["tool_calls"] = []map[string]any{{"index": 0, "id": "call_1", "type": "function", "function": map[string]string{"name": "writeTodos", "arguments": args}}}
		finish = "tool_calls"
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		data, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	chunk(msg, nil)
	chunk(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// echoApp writes an app whose route "chat" (with a plan) runs on the
// echo model at url.
func echoApp(t *testing.T, url string) (dir string, env []string) {
	dir = writeApp(t, map[string]string{
		"chat/agent.md": "---\ndescription: Answers what it is told.\nmodel: openai:gpt-echo\n---\nAnswer.\n",
		"chat/plan.md":  "- [ ] First\n- [ ] Second\n",
	})
	return dir, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + url + "/v1"}
}

// TestMultitaskAcrossReplicas runs the LangGraph SDK's client
// (tools/langgraph/multitask.e2e.mjs) against two `dawn start` replicas of
// one Postgres database on a slow echo model: messages enqueued through
// either replica while a run is in flight run in order, each seeing the
// answers before it; a pending run is cancelled; interrupt and rollback
// (as a strategy and as a cancel's action) sent to replica B stop a run
// on replica A and leave the state the documentation says.
func TestMultitaskAcrossReplicas(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), "DAWN_REQUIRE_NODE")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	_, modelURL := newEchoModel(t, 150*time.Millisecond)
	app, env := echoApp(t, modelURL)
	reps := startReplicas(t, 2, app, pgtest.Database(t), env)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-timeout=60000", "multitask.e2e.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+reps[0].url, "DAWN_REPLICA_URL="+reps[1].url, "DAWN_MODEL_URL="+modelURL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test multitask.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the multitask client tests failed: %v (their output is above)\nreplica A:\n%s\nreplica B:\n%s", err, reps[0].logs.String(), reps[1].logs.String())
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "5" {
		t.Fatalf("node --test did not pass the five multitask tests")
	}
}

// TestQueuedRunSurvivesRestart: a run queued (LangGraph enqueue) behind a
// run in flight, and a run delayed by after_seconds, are kept in the store
// when the server is killed (SIGKILL); the restarted server starts them
// in order, each seeing the answers before it.
func TestQueuedRunSurvivesRestart(t *testing.T) {
	model, modelURL := newEchoModel(t, 0)
	app, env := echoApp(t, modelURL)
	env = append(env, "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	start := func() (*process, *client) {
		p := startDawn(t, env, "start", "--app", app, "--host", "127.0.0.1", "--port", "0")
		c := newClient(p.url)
		t.Cleanup(c.close)
		return p, c
	}
	a, ca := start()
	post := func(c *client, text string, extra map[string]any) lgRunObject {
		t.Helper()
		body := map[string]any{"assistant_id": "chat", "if_not_exists": "create", "input": map[string]any{"messages": []map[string]string{{"type": "human", "content": text}}}}
		for k, v := range extra {
			body[k] = v
		}
		data, _ := json.Marshal(body)
		r := c.must(t, http.MethodPost, "/threads/kept/runs", data)
		var run lgRunObject
		if r.status != http.StatusOK || json.Unmarshal(r.body, &run) != nil {
			t.Fatalf("POST /threads/kept/runs %s = %d %s", text, r.status, r.body)
		}
		return run
	}
	first := post(ca, "[hold:restart] zero", nil)
	deadline := time.Now().Add(30 * time.Second)
	for model.heldOn("restart") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the first run never reached the model\n%s", a.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	queued := post(ca, "one", map[string]any{"multitask_strategy": "enqueue"})
	delayed := post(ca, "two", map[string]any{"after_seconds": 1})
	if queued.Status != "pending" || delayed.Status != "pending" {
		t.Fatalf("queued %s, delayed %s; want both pending", queued.Status, delayed.Status)
	}
	a.kill()

	_, cb := start()
	logs := func() string { return a.logs.String() }
	if st := waitLGStatus(t, cb, "kept", delayed.RunID, logs); st != "success" {
		t.Fatalf("the delayed run ended %s after the restart, want success", st)
	}
	for _, r := range []struct {
		id, want string
	}{{first.RunID, "error"}, {queued.RunID, "success"}} {
		var got lgRunObject
		cb.getJSON(t, "/threads/kept/runs/"+r.id, &got)
		if got.Status != r.want {
			t.Errorf("run %s is %s after the restart, want %s", r.id, got.Status, r.want)
		}
	}
	var state struct {
		Values struct {
			Messages []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	cb.getJSON(t, "/threads/kept/state", &state)
	var texts []string
	for _, m := range state.Values.Messages {
		if m.Content != "" {
			texts = append(texts, m.Content)
		}
	}
	want := []string{"one", "re: one after 0 answers", "two", "re: two after 1 answers"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("messages after the restart: %q, want %q", texts, want)
	}
}

// heldOn is how many requests the model has held on gate name.
func (m *echoModel) heldOn(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.arrived[name]
}
