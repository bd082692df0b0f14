package models

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRetryPolicyFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    RetryPolicy
		wantErr string
	}{
		{nil, RetryPolicy{Retries: DefaultRetries, MaxWait: DefaultRetryMaxWait}, ""},
		{map[string]string{EnvRetries: "0", EnvRetryMaxWait: "2s"}, RetryPolicy{Retries: 0, MaxWait: 2 * time.Second}, ""},
		{map[string]string{EnvRetries: "many"}, RetryPolicy{}, EnvRetries},
		{map[string]string{EnvRetries: "11"}, RetryPolicy{}, EnvRetries},
		{map[string]string{EnvRetryMaxWait: "30"}, RetryPolicy{}, EnvRetryMaxWait},
	}
	for _, tt := range tests {
		got, err := retryPolicyFrom("openai:m", func(k string) string { return tt.env[k] })
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("env %v: err = %v, want one naming %s", tt.env, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("env %v: %+v, %v; want %+v", tt.env, got, err, tt.want)
		}
	}
}

// statusServer answers every request with status and header, counting them.
func statusServer(t *testing.T, status int, header map[string]string) (string, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"nope","type":"server_error"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func callOpenAI(t *testing.T, spec, base string, env map[string]string) ([]Attempt, error) {
	t.Helper()
	all := map[string]string{EnvOpenAIBaseURL: base, EnvOpenAIKey: "k"}
	for k, v := range env {
		all[k] = v
	}
	m, err := New(spec, func(k string) string { return all[k] })
	if err != nil {
		t.Fatal(err)
	}
	var attempts []Attempt
	ctx := WithAttemptObserver(context.Background(), func(a Attempt) { attempts = append(attempts, a) })
	_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	return attempts, err
}

// TestRetriesAreBounded: a server that always answers 503 is asked
// 1+DAWN_MODEL_RETRIES times, with exponential backoff capped by the
// maximum wait, and the error names the status.
func TestRetriesAreBounded(t *testing.T) {
	base, n := statusServer(t, http.StatusServiceUnavailable, nil)
	attempts, err := callOpenAI(t, "openai:m", base, map[string]string{EnvRetries: "2", EnvRetryMaxWait: "1ms"})
	var me *ModelError
	if !errors.As(err, &me) || me.Status != 503 {
		t.Fatalf("err = %v, want a *ModelError with status 503", err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("server got %d requests, want 3", got)
	}
	if len(attempts) != 2 || attempts[0].Attempt != 1 || attempts[1].Attempt != 2 || attempts[1].Wait != time.Millisecond || attempts[0].Next != "openai:m" {
		t.Errorf("attempts = %+v, want 2 retries of openai:m waiting 1ms", attempts)
	}
}

// TestRetryAfterBeyondMaxWaitIsNotRetried: a 429 asking for a longer wait
// than DAWN_MODEL_RETRY_MAX_WAIT allows goes straight to the next model.
func TestRetryAfterBeyondMaxWaitIsNotRetried(t *testing.T) {
	limited, n := statusServer(t, http.StatusTooManyRequests, map[string]string{"Retry-After": "60"})
	down, m := statusServer(t, http.StatusBadGateway, nil)
	env := map[string]string{EnvRetryMaxWait: "1s", EnvRetries: "0", EnvOllamaHost: down}
	attempts, err := callOpenAI(t, "openai:m, ollama:x", limited, env)
	if err == nil {
		t.Fatal("want an error: both servers fail")
	}
	if n.Load() != 1 || m.Load() != 1 {
		t.Errorf("requests = %d, %d; want one each", n.Load(), m.Load())
	}
	if len(attempts) != 1 || attempts[0].Model != "openai:m" || attempts[0].Next != "ollama:x" || attempts[0].Status != 429 {
		t.Errorf("attempts = %+v, want one fallback from openai:m to ollama:x", attempts)
	}
	if !strings.Contains(err.Error(), "ollama:x") || !strings.Contains(err.Error(), "after 1 other models failed") {
		t.Errorf("err = %v, want the last model's error naming the earlier failure", err)
	}
}

// TestFallbackNotAfterStreamedText: once a model has streamed text the
// client saw, its failure is the run's; the next model is not asked.
func TestFallbackNotAfterStreamedText(t *testing.T) {
	var second atomic.Int32
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the stream off
	}))
	t.Cleanup(broken.Close)
	f := &fallbackModel{specs: []string{"openai:a", "openai:b"}}
	for _, base := range []string{broken.URL, ""} {
		if base == "" {
			f.models = append(f.models, countingModel{&second})
			continue
		}
		m, err := New("openai:a", func(k string) string {
			return map[string]string{EnvOpenAIBaseURL: base, EnvOpenAIKey: "k"}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		f.models = append(f.models, m)
	}
	var text strings.Builder
	_, err := f.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { text.Write(b); return nil }))
	if text.String() == "" {
		t.Fatalf("nothing streamed before the cut (err %v); the test needs the first chunk", err)
	}
	if err == nil || second.Load() != 0 {
		t.Errorf("err = %v, second model asked %d times; want the first model's error and no fallback", err, second.Load())
	}
}

type countingModel struct{ n *atomic.Int32 }

func (c countingModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	c.n.Add(1)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

func (c countingModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, options...)
}

func TestParseSpecList(t *testing.T) {
	specs, err := ParseSpecList("openai:gpt-4o-mini, ollama:llama3.2:1b,offline")
	if err != nil || len(specs) != 3 || specs[1].Name != "llama3.2:1b" || specs[2].Provider != ProviderOffline {
		t.Fatalf("ParseSpecList = %+v, %v", specs, err)
	}
	if _, err := ParseSpecList("openai:gpt-4o-mini,,offline"); err == nil || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("empty entry: err = %v, want one naming entry 2", err)
	}
}
