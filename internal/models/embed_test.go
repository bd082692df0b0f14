package models

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// embedServer answers embedding requests of either wire with vector
// [len(text), index] per text, and records each request's path, auth
// header and input count.
type embedServer struct {
	mu       sync.Mutex
	requests []string
}

func (s *embedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input    []string `json:"input"`
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"requests"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	auth := r.Header.Get("Authorization") + r.Header.Get("x-goog-api-key")
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path+" "+auth+" "+strconv.Itoa(len(body.Input)+len(body.Requests)))
	s.mu.Unlock()
	if strings.Contains(auth, "bad") {
		http.Error(w, `{"error":{"message":"invalid key"}}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, ":batchEmbedContents") {
		var out []map[string][]float32
		for i, rq := range body.Requests {
			out = append(out, map[string][]float32{"values": {float32(len(rq.Content.Parts[0].Text)), float32(i)}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
		return
	}
	var data []map[string]any
	// Answered in reverse order: the client must place them by index.
	for i := len(body.Input) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"index": i, "embedding": []float32{float32(len(body.Input[i])), float32(i)}})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "usage": map[string]int{"prompt_tokens": 2 * len(body.Input)}})
}

// TestEmbedderProviders: each provider's embedding wire, its key, and
// vectors in the order of the texts; more texts than one request takes
// are sent in several.
func TestEmbedderProviders(t *testing.T) {
	srv := &embedServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	cases := []struct {
		spec string
		env  map[string]string
		want string // path and auth of the first request
	}{
		{"openai:text-embedding-3-small", map[string]string{EnvOpenAIKey: "sk-1", EnvOpenAIBaseURL: ts.URL + "/v1"}, "/v1/embeddings Bearer sk-1"},
		{"openai-compatible:bge", map[string]string{EnvCompatibleBaseURL: ts.URL + "/v1"}, "/v1/embeddings "},
		{"ollama:nomic-embed-text", map[string]string{EnvOllamaHost: host}, "/v1/embeddings "},
		{"gemini:text-embedding-004", map[string]string{EnvGeminiKey: "g-1", EnvGeminiBaseURL: ts.URL + "/v1beta"}, "/v1beta/models/text-embedding-004:batchEmbedContents g-1"},
	}
	texts := make([]string, embedBatch+5)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			srv.requests = nil
			e, err := NewEmbedder(tc.spec, func(k string) string { return tc.env[k] }, nil)
			if err != nil {
				t.Fatal(err)
			}
			vectors, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vectors {
				if len(v) != 2 || int(v[0]) != i+1 {
					t.Fatalf("vector %d = %v, want the one of text %d", i, v, i)
				}
			}
			if len(srv.requests) != 2 || srv.requests[0] != tc.want+" 100" || !strings.HasSuffix(srv.requests[1], " 5") {
				t.Errorf("requests %q, want two (100 and 5 texts), the first %q", srv.requests, tc.want)
			}
			requests, tokens := e.Usage()
			if requests != 2 || (tc.spec[0] == 'g') != (tokens == 0) {
				t.Errorf("usage: %d requests, %d tokens", requests, tokens)
			}
		})
	}
}

// TestEmbedderErrors: a missing key or URL names the variable to set; a
// provider without an embedding API is named; a refused key is a
// ModelError of kind auth.
func TestEmbedderErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"openai:text-embedding-3-small": EnvOpenAIKey + " is not set",
		"openai-compatible:bge":         EnvCompatibleBaseURL + " is not set",
		"gemini:text-embedding-004":     EnvGeminiKey + " is not set",
		"anthropic:claude":              "provider anthropic has no embedding API",
	} {
		if _, err := NewEmbedder(spec, nil, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewEmbedder(%q) = %v, want it to say %q", spec, err, want)
		}
	}
	ts := httptest.NewServer(&embedServer{})
	defer ts.Close()
	env := map[string]string{EnvOpenAIKey: "bad", EnvOpenAIBaseURL: ts.URL + "/v1", EnvRetries: "0"}
	e, err := NewEmbedder("openai:text-embedding-3-small", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []EmbedCall
	e.observe = func(_ context.Context, c EmbedCall) { calls = append(calls, c) }
	_, err = e.Embed(context.Background(), []string{"a"})
	var me *ModelError
	if !errors.As(err, &me) || me.Kind != KindAuth || me.Status != 401 {
		t.Fatalf("refused key: %v, want a ModelError of kind auth, status 401", err)
	}
	if len(calls) != 1 || calls[0].Err == nil || calls[0].Texts != 1 {
		t.Errorf("observer saw %+v, want one failed call of one text", calls)
	}
}
