package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// echoTurn answers a model call with what it saw: the last user message
// and how many answers came before it.
func echoTurn(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
	answers := 0
	for _, m := range msgs {
		if m.Role == llms.ChatMessageTypeAI {
			answers++
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: fmt.Sprintf("re: %s after %d answers", apptest.LastUser(msgs), answers)}}}, nil
}

// multitaskBody is a Dawn run request on /plain with extra fields.
func multitaskBody(text string, extra map[string]any) string {
	b := map[string]any{"route": "/plain", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}}}
	for k, v := range extra {
		b[k] = v
	}
	data, _ := json.Marshal(b)
	return string(data)
}

// waitStatuses polls a thread's run statuses until they are want.
func waitStatuses(t *testing.T, base, thread string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got []string
		if resp, err := http.Get(base + "/threads/" + thread + "/runs"); err == nil {
			var runs []struct{ Status string }
			_ = json.NewDecoder(resp.Body).Decode(&runs) // 404 until the thread exists
			resp.Body.Close()
			for _, r := range runs {
				got = append(got, r.Status)
			}
		}
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of %s are %v, want %v", thread, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lastContent is the content of the last message of a runs/wait answer or
// a done event's output.
func lastContent(t *testing.T, data []byte) string {
	t.Helper()
	var v struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &v); err != nil || len(v.Messages) == 0 {
		t.Fatalf("not a state with messages: %s", data)
	}
	return v.Messages[len(v.Messages)-1].Content
}

// TestMultitaskEnqueueDawnWire: with a run in flight, a run without a
// strategy is refused (409); runs/stream and runs/wait with enqueue wait
// in the queue, listed as pending, and start in order once the thread is
// free, each seeing the answers before it.
func TestMultitaskEnqueueDawnWire(t *testing.T) {
	gate := make(chan struct{})
	model := dawntest.Script().Wait(gate).Then(echoTurn).Then(echoTurn).Then(echoTurn)
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	base := h.Serve(t)
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	first := make(chan *http.Response, 1)
	go func() { first <- post(t, base+"/threads/q/runs/wait", multitaskBody("one", nil)) }()
	for model.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	resp := post(t, base+"/threads/q/runs/wait", multitaskBody("refused", nil))
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusConflict || e.Error.Kind != "run_in_flight" {
		t.Fatalf("a second run without a strategy: %d %+v, want 409 run_in_flight", resp.StatusCode, e)
	}
	streamed := make(chan []stream.Event, 1)
	go func() {
		streamed <- readSSE(t, post(t, base+"/threads/q/runs/stream", multitaskBody("two", map[string]any{"multitask_strategy": "enqueue"})))
	}()
	waitStatuses(t, base, "q", "pending", "running")
	// A client joins the queued run's stream by its id before it starts.
	var listed []struct {
		RunID string `json:"run_id"`
	}
	getJSON(t, base+"/threads/q/runs", &listed)
	joined := make(chan []stream.Event, 1)
	go func() {
		resp, err := http.Get(base + "/threads/q/runs/" + listed[0].RunID + "/stream")
		if err != nil {
			joined <- nil
			return
		}
		joined <- readSSE(t, resp)
	}()
	waited := make(chan *http.Response, 1)
	go func() {
		waited <- post(t, base+"/threads/q/runs/wait", multitaskBody("three", map[string]any{"multitask_strategy": "enqueue"}))
	}()
	waitStatuses(t, base, "q", "pending", "pending", "running")
	close(gate)

	r := <-first
	r.Body.Close()
	events := <-streamed
	done := events[len(events)-1]
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	if done.Type != stream.TypeDone || json.Unmarshal(done.Data, &d) != nil {
		t.Fatalf("the queued stream ended with %s %s", done.Type, done.Data)
	}
	if got := lastContent(t, d.Output); got != "re: two after 1 answers" {
		t.Errorf("the first queued run answered %q", got)
	}
	if got := <-joined; len(got) != len(events) || got[len(got)-1].Type != stream.TypeDone || string(got[len(got)-1].Data) != string(done.Data) {
		t.Errorf("the joined stream of the queued run: %v, want the same events as its own stream %v", dawntest.Types(got), dawntest.Types(events))
	}
	r = <-waited
	data := readBody(t, r)
	if r.StatusCode != http.StatusOK || lastContent(t, data) != "re: three after 2 answers" {
		t.Errorf("the second queued run's runs/wait: %d %s", r.StatusCode, data)
	}
	waitStatuses(t, base, "q", "success", "success", "success")
}

// TestMultitaskRollbackDawnWire: rollback cancels the run in flight and
// deletes it and every step it saved (its plan change included); the new
// run starts from the state before it. interrupt keeps the saved steps.
func TestMultitaskRollbackDawnWire(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	model := dawntest.Script().Then(echoTurn).
		CallTool("writeTodos", apptest.FourTodos(1)).Wait(gate).Reply("never").
		Then(echoTurn).
		CallTool("writeTodos", apptest.FourTodos(2)).Wait(gate).Reply("never").
		Then(echoTurn)
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	base := h.Serve(t)
	route := map[string]any{"route": "/support/acme"}
	body := func(text string, extra map[string]any) string {
		var b map[string]any
		_ = json.Unmarshal([]byte(multitaskBody(text, extra)), &b)
		for k, v := range route {
			b[k] = v
		}
		data, _ := json.Marshal(b)
		return string(data)
	}
	readBody(t, post(t, base+"/threads/r/runs/wait", body("one", nil)))

	// A run that saved its plan step and waits in its next model call.
	heldRun := func(text string, calls int) {
		go func() { readBody(t, post(t, base+"/threads/r/runs/wait", body(text, nil))) }()
		for model.Calls() < calls {
			time.Sleep(time.Millisecond)
		}
	}
	heldRun("two", 3)
	r := post(t, base+"/threads/r/runs/wait", body("three", map[string]any{"multitask_strategy": "rollback"}))
	data := readBody(t, r)
	if r.StatusCode != http.StatusOK || lastContent(t, data) != "re: three after 1 answers" {
		t.Fatalf("the rolling back run: %d %s", r.StatusCode, data)
	}
	state := threadState(t, base, "r")
	if !slices.Equal(state.texts(), []string{"one", "re: one after 0 answers", "three", "re: three after 1 answers"}) || state.Values.Todos[1].Status != "pending" {
		t.Fatalf("after the rollback: messages %q, todos %+v", state.texts(), state.Values.Todos)
	}
	if got := runStatuses(t, base, "r"); !slices.Equal(got, []string{"success", "success"}) {
		t.Errorf("runs after the rollback: %v, want the rolled back run gone", got)
	}

	heldRun("four", 6)
	r = post(t, base+"/threads/r/runs/wait", body("five", map[string]any{"multitask_strategy": "interrupt"}))
	data = readBody(t, r)
	if r.StatusCode != http.StatusOK || !strings.HasPrefix(lastContent(t, data), "re: five") {
		t.Fatalf("the interrupting run: %d %s", r.StatusCode, data)
	}
	state = threadState(t, base, "r")
	texts := state.texts()
	if !slices.Contains(texts, "four") || state.Values.Todos[2].Status != "in_progress" {
		t.Errorf("after the interrupt, the interrupted run's step is kept: messages %q, todos %+v", texts, state.Values.Todos)
	}
	if got := runStatuses(t, base, "r"); !slices.Equal(got, []string{"success", "cancelled", "success", "success"}) {
		t.Errorf("runs after the interrupt: %v", got)
	}
}

// stateOf is the part of GET /threads/:id/state these tests read.
type stateOf struct {
	Values struct {
		Messages []struct {
			Content string `json:"content"`
			Role    string `json:"role"`
		} `json:"messages"`
		Todos []struct {
			Status string `json:"status"`
		} `json:"todos"`
	} `json:"values"`
}

// texts are the contents of the user and assistant messages with text.
func (s stateOf) texts() []string {
	var out []string
	for _, m := range s.Values.Messages {
		if (m.Role == "user" || m.Role == "assistant") && m.Content != "" {
			out = append(out, m.Content)
		}
	}
	return out
}

func threadState(t *testing.T, base, thread string) stateOf {
	t.Helper()
	var s stateOf
	if code := getJSON(t, base+"/threads/"+thread+"/state", &s); code != http.StatusOK {
		t.Fatalf("state of %s: %d", thread, code)
	}
	return s
}

// readBody reads and closes a response's body.
func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// TestMultitaskEnqueueWhenFull: under --max-runs, a run sent with enqueue
// while the server is full is queued, not refused, and starts once a run
// ends; one sent with reject is refused (503 overloaded).
func TestMultitaskEnqueueWhenFull(t *testing.T) {
	gate := make(chan struct{})
	model := dawntest.Script().Wait(gate).Then(echoTurn).Then(echoTurn)
	h := apptest.New(t, supportApp(t), model, apptest.Options{MaxRuns: 1})
	base := h.Serve(t)
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
	}()
	first := make(chan *http.Response, 1)
	go func() { first <- post(t, base+"/threads/a/runs/wait", multitaskBody("one", nil)) }()
	for model.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	r := post(t, base+"/threads/b/runs/wait", multitaskBody("refused", nil))
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a run on another thread of a full server: %d %s, want 503", r.StatusCode, readBody(t, r))
	} else {
		r.Body.Close()
	}
	queued := make(chan *http.Response, 1)
	go func() {
		queued <- post(t, base+"/threads/b/runs/wait", multitaskBody("two", map[string]any{"multitask_strategy": "enqueue"}))
	}()
	waitStatuses(t, base, "b", "pending")
	close(gate)
	opened = true
	readBody(t, <-first)
	r = <-queued
	if data := readBody(t, r); r.StatusCode != http.StatusOK || lastContent(t, data) != "re: two after 0 answers" {
		t.Errorf("the queued run of the full server: %d %s", r.StatusCode, data)
	}
}
