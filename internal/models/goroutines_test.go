package models

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestModelCallGoroutines checks what a model call waiting for its answer
// holds: a server keeps thousands of them at once, and each goroutine is
// a stack of 8 KiB or more. A call over HTTP/1.1 needs the caller and the
// connection's read and write loops; the test's own server adds two per
// connection. The bound on the whole call must not add goroutines of its
// own (an http.Client Timeout adds two per request).
func TestModelCallGoroutines(t *testing.T) {
	const calls = 20
	arrived := make(chan struct{}, calls)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	env := map[string]string{EnvOpenAIKey: "k", "OPENAI_BASE_URL": srv.URL + "/v1"}
	m, err := New("openai:gpt-4o-mini", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}); err != nil {
				t.Error(err)
			}
		})
	}
	for range calls {
		<-arrived
	}
	perCall := float64(runtime.NumGoroutine()-before) / calls
	close(release)
	wg.Wait()
	if perCall > 5 {
		t.Errorf("a model call waiting for its answer holds %.1f goroutines, want at most 5 (caller, read and write loops, the test server's two)", perCall)
	}
}
