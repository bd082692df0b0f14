package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestModelFallbackAndRetry runs a route whose model: is a list against
// aimock's error injection: openai:broken answers 503 every time, so it is
// retried once (DAWN_MODEL_RETRIES=1) and then the run falls back to
// anthropic:claude-flaky, which answers 429 with Retry-After: 1 once and
// then the answer. Each failed try is a model_retry event on the stream.
func TestModelFallbackAndRetry(t *testing.T) {
	mock := startAimock(t, "testdata/model_retry.json")
	dir := t.TempDir()
	agent := "---\nmodel: [openai:broken, anthropic:claude-flaky]\n---\nYou help customers.\n"
	if err := os.MkdirAll(filepath.Join(dir, "chat"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat", "agent.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		models.EnvOpenAIBaseURL: mock + "/v1", models.EnvOpenAIKey: "test",
		models.EnvAnthropicBaseURL: mock, models.EnvAnthropicKey: "test",
		models.EnvRetries: "1", models.EnvRetryMaxWait: "5s",
	}
	h := dawntest.New(t, dir, nil, dawntest.Options{
		StorePath: filepath.Join(t.TempDir(), "dawn.db"),
		Models: func(spec string) (llms.Model, error) {
			return models.New(spec, func(k string) string { return env[k] })
		},
	})

	events := readEvents(t, postJSON(t, h.URL+"/threads/retry/runs/stream", runBody("/chat")))
	type retry struct {
		Attempt int    `json:"attempt"`
		Model   string `json:"model"`
		Next    string `json:"next"`
		Status  int    `json:"status"`
		Error   string `json:"error"`
		WaitMs  int64  `json:"wait_ms"`
	}
	var retries []retry
	var text strings.Builder
	for _, e := range events {
		switch e.Type {
		case stream.TypeModelRetry:
			var r retry
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatalf("model_retry data %s: %v", e.Data, err)
			}
			retries = append(retries, r)
		case stream.TypeChunk:
			var s string
			_ = json.Unmarshal(e.Data, &s)
			text.WriteString(s)
		}
	}
	if last := events[len(events)-1]; last.Type != stream.TypeDone || strings.Contains(string(last.Data), `"error"`) {
		t.Fatalf("last event = %s %s, want done without an error", last.Type, last.Data)
	}
	if text.String() != "Recovered after a retry." {
		t.Errorf("answer = %q, want the fallback model's", text.String())
	}
	want := []retry{
		{Attempt: 1, Model: "openai:broken", Next: "openai:broken", Status: 503, WaitMs: 500},
		{Attempt: 2, Model: "openai:broken", Next: "anthropic:claude-flaky", Status: 503},
		{Attempt: 3, Model: "anthropic:claude-flaky", Next: "anthropic:claude-flaky", Status: 429, WaitMs: 1000},
	}
	if len(retries) != len(want) {
		t.Fatalf("model_retry events = %+v, want %d of them", retries, len(want))
	}
	for i, w := range want {
		got := retries[i]
		if got.Error == "" {
			t.Errorf("model_retry %d has no error", i+1)
		}
		got.Error = ""
		if got != w {
			t.Errorf("model_retry %d = %+v, want %+v", i+1, got, w)
		}
	}
}
