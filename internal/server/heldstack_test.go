package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/models"
)

// TestHeldRunStack holds runs/wait runs over loopback HTTP while their
// model, an OpenAI-wire server on loopback, keeps its answer, and checks
// what the process's goroutine stacks cost per held run once the garbage
// collector has shrunk them. A run's goroutine grows its stack while it
// starts (the store, the prompt); the collector halves a waiting
// goroutine's stack only while it uses less than a quarter of it, so a run
// that waits under frames of 8 KiB or more keeps 32 KiB, and one that
// waits under less goes down to 16 KiB. Besides the run's, each held run
// has eight goroutines here (the test's client, both ends of two loopback
// connections, the model's handler), which wait shallow and come down to a
// few KiB each.
func TestHeldRunStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector doubles the stacks and their guard: the figures below are of a normal build")
	}
	const n = 100
	mock := newHoldingModelServer()
	defer mock.srv.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer mock.release()
	env := map[string]string{models.EnvOpenAIKey: "test", models.EnvOpenAIBaseURL: mock.srv.URL + "/v1", models.EnvRetries: "0"}
	model, err := models.New("openai:gpt-4o-mini", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, url := benchServe(t, model)
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	stack0 := ms.StackInuse
	for i := range n {
		wg.Go(func() {
			resp, err := benchPost(client, url, "/threads/stack-"+strconv.Itoa(i)+"/runs/wait")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		})
	}
	deadline := time.Now().Add(time.Minute)
	for mock.waiting.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs reached their model call within a minute", mock.waiting.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Each collection halves a stack at most once.
	for range 5 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	perRun := (int64(ms.StackInuse) - int64(stack0)) / n
	t.Logf("goroutine stacks per held run, its client and model included: %d KiB", perRun>>10)
	// The run's goroutine at 16 KiB and eight others (the client's, the
	// two ends of each connection, the model's handler) at about 36 KiB
	// together; at 32 KiB the total is about 70 KiB.
	if perRun > 60<<10 {
		t.Errorf("goroutine stacks per held run: %d KiB, want at most 60 KiB: does the run's goroutine wait under 8 KiB or more of frames?", perRun>>10)
	}
}

// holdingModelServer is an OpenAI chat-completions server that answers a
// run's first call with a plan and keeps its second until release, then
// answers with text.
type holdingModelServer struct {
	srv     *httptest.Server
	waiting atomic.Int64
	open    chan struct{}
	once    sync.Once
}

func newHoldingModelServer() *holdingModelServer {
	m := &holdingModelServer{open: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !bytes.Contains(body, []byte(`"role":"tool"`)) {
			// The first turn plans, as the workload's does: the run then
			// runs a tool and saves a step before its second call.
			_, _ = io.WriteString(w, `{"id":"c0","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_plan","type":"function","function":{"name":"writeTodos","arguments":`+strconv.Quote(heldPlan)+`}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
			return
		}
		m.waiting.Add(1)
		select {
		case <-m.open:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	return m
}

// heldPlan is the first turn's writeTodos input.
const heldPlan = `{"todos":[{"content":"Understand the customer request","status":"in_progress"},{"content":"Check account context","status":"pending"},{"content":"Decide whether to answer or escalate","status":"pending"},{"content":"Write the final response","status":"pending"}]}`

func (m *holdingModelServer) release() { m.once.Do(func() { close(m.open) }) }
