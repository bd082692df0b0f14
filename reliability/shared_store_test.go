//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldModel is an OpenAI chat-completions server whose answers wait until
// the test releases them, so a run can be held in the middle of its model
// call for as long as the test needs. Each answer is the text "Held answer".
type heldModel struct {
	arrived chan struct{} // gets a value when a request arrives
	release chan struct{} // closed to let every request answer
	once    sync.Once
}

func newHeldModel(t *testing.T) (*heldModel, string) {
	m := &heldModel{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	t.Cleanup(m.free) // before srv.Close: a held request would block it
	return m, srv.URL + "/v1"
}

func (m *heldModel) free() { m.once.Do(func() { close(m.release) }) }

func (m *heldModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &body)
	select {
	case m.arrived <- struct{}{}:
	default:
	}
	select {
	case <-m.release:
	case <-r.Context().Done():
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Held answer"},"finish_reason":"stop"}]}`, body.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Held answer\"},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// heldApp is an app whose one route runs on the held model.
func heldApp(t *testing.T) (dir string, env []string, model *heldModel) {
	model, url := newHeldModel(t)
	dir = writeApp(t, map[string]string{
		"held/agent.md": "---\ndescription: Answers once the test lets it.\nmodel: openai:gpt-held\n---\nAnswer.\n",
	})
	return dir, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + url}, model
}

// waitArrived waits until the held model has a request.
func waitArrived(t *testing.T, m *heldModel) {
	t.Helper()
	select {
	case <-m.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not reach the model within 30s")
	}
}

// TestSecondServerSparesLiveRuns starts `dawn start` A, holds a run on it in
// its model call, starts `dawn start` B on the same store file, and then lets
// the run finish: B's start-up must not mark A's run interrupted, so A saves
// the answer and the run ends in success, seen from both servers.
func TestSecondServerSparesLiveRuns(t *testing.T) {
	dir, env, model := heldApp(t)
	a := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	ca := newClient(a.url)
	defer ca.close()

	type result struct {
		r   reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := ca.do(http.MethodPost, "/threads/shared/runs/wait", runBody("/held", "Hello"))
		done <- result{r, err}
	}()
	waitArrived(t, model)

	b := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	cb := newClient(b.url)
	defer cb.close()
	if strings.Contains(b.logs.String(), "interrupted") {
		t.Errorf("server B marked runs interrupted at start-up while server A ran them:\n%s", b.logs)
	}
	model.free()

	res := <-done
	if res.err != nil || res.r.status != http.StatusOK {
		t.Fatalf("runs/wait on server A = %d %s (%v), want 200 with the answer; server A's log:\n%s", res.r.status, res.r.body, res.err, a.logs)
	}
	if !strings.Contains(string(res.r.body), "Held answer") {
		t.Errorf("runs/wait answered %s, want the model's answer", res.r.body)
	}
	for name, c := range map[string]*client{"A": ca, "B": cb} {
		var runs []runRecord
		c.getJSON(t, "/threads/shared/runs", &runs)
		if len(runs) != 1 || runs[0].Status != "success" {
			t.Errorf("server %s lists the thread's runs as %+v, want one run in success", name, runs)
		}
		var s threadState
		c.getJSON(t, "/threads/shared/state", &s)
		if m := s.Values.Messages; len(m) == 0 || m[len(m)-1].Content != "Held answer" {
			t.Errorf("server %s: the thread's messages %+v do not end with the answer", name, m)
		}
	}
	if !a.stop(10*time.Second) || !b.stop(10*time.Second) {
		t.Errorf("a server did not stop within 10s of SIGTERM")
	}
}

// TestServerRecoversDeadPeer: two servers share a store; A is killed with
// SIGKILL while it holds a run. B, still running, marks that run
// interrupted on its own (it looks for gone owners every third of its
// lease, 1s here), and the thread takes a new run on B.
func TestServerRecoversDeadPeer(t *testing.T) {
	dir, env, model := heldApp(t)
	a := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	b := startDawn(t, append(env, "DAWN_STORE_LEASE=1s"), "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	ca, cb := newClient(a.url), newClient(b.url)
	defer ca.close()
	defer cb.close()
	go func() { _, _ = ca.do(http.MethodPost, "/threads/shared/runs/wait", runBody("/held", "Hello")) }()
	waitArrived(t, model)
	var runs []runRecord
	cb.getJSON(t, "/threads/shared/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("server B lists the runs as %+v, want one running", runs)
	}
	a.kill()
	model.free()

	deadline := time.Now().Add(15 * time.Second)
	for runs[0].Status == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("server B did not mark the dead server's run interrupted within 15s; its log:\n%s", b.logs)
		}
		time.Sleep(20 * time.Millisecond)
		cb.getJSON(t, "/threads/shared/runs", &runs)
	}
	if runs[0].Status != "interrupted" || runs[0].Error == "" {
		t.Errorf("the dead server's run is %+v, want interrupted with a reason", runs[0])
	}
	if r := cb.must(t, http.MethodPost, "/threads/shared/runs/wait", runBody("/held", "Again")); r.status != http.StatusOK {
		t.Errorf("runs/wait on server B after the recovery = %d %s, want 200", r.status, r.body)
	}
}
