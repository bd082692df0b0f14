package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dawn-go/dawn/markers"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestModelRetryIsLogged: a model call the server answers 503 once is
// retried, and the server's log has a warning for the failed try with
// the thread, the run and the attempt.
func TestModelRetryIsLogged(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.md"), []byte("---\nmodel: openai:m\n---\nYou help.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL, "DAWN_MODEL_RETRY_MAX_WAIT": "1ms"}
	var logs syncBuffer
	m := runner.New(st, a, runner.Options{
		Env:    func(k string) string { return env[k] },
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	run, err := m.Start(context.Background(), runner.Request{ThreadID: "t", Route: "/", Messages: []thread.Message{{Role: "user", Content: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if run.Err() != nil {
		t.Fatalf("run failed: %v", run.Err())
	}
	out := logs.String()
	for _, want := range []string{`"msg":"model call failed; trying again"`, `"thread":"t"`, `"attempt":{"attempt":1,"model":"openai:m","next":"openai:m","status":503,"wait_ms":1,`, "overloaded"} {
		if !strings.Contains(out, want) {
			t.Errorf("log does not hold %s:\n%s", want, out)
		}
	}
}
