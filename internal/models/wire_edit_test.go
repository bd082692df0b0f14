package models

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWireEditsCopyTheBodyOnce: an OpenAI request with both edits (no
// temperature, a prompt-cache key) reaches the provider's transport with
// both applied, after one read of its body and one copy of the request: a
// 64 KB body costs under four times its size. Each edit read the body
// (growing a buffer as it went) and copied the request, about seven times
// the body a call, all of it held while the call waits for the model.
func TestWireEditsCopyTheBodyOnce(t *testing.T) {
	body := []byte(`{"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"user","content":"` + strings.Repeat("x", 64<<10) + `"}]}`)
	ctx := context.WithValue(context.Background(), omitTemperatureKey{}, true)
	ctx = withCacheEdit(WithPromptCacheKey(ctx, "thread-1"), ProviderOpenAI, 0)
	var sent []byte
	keep := true
	tr := wireTransport{next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if keep {
			sent, _ = io.ReadAll(r.Body)
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})}
	call := func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	call()
	var got map[string]json.RawMessage
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatalf("sent %.80s: %v", sent, err)
	}
	if _, ok := got["temperature"]; ok || string(got["prompt_cache_key"]) != `"thread-1"` {
		t.Fatalf("sent temperature %s, prompt_cache_key %s; want none and \"thread-1\"", got["temperature"], got["prompt_cache_key"])
	}
	keep = false
	const calls = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		call()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / calls
	t.Logf("an edited %d-byte request allocates %d bytes", len(body), per)
	if per > 4*uint64(len(body)) {
		t.Errorf("an edited %d-byte request allocates %d bytes (%.1f times); want under 4 times", len(body), per, float64(per)/float64(len(body)))
	}
}
