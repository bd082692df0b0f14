// Package embedtest serves a scripted embedding API over loopback for
// tests: OpenAI's POST /v1/embeddings, answering fixed vectors for fixed
// texts, so that a search by meaning has one right answer. It imports
// nothing of Dawn.
package embedtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is a scripted embedding endpoint. Its vectors are set when it is
// made; a text it has no vector for is answered with a 400 naming it, so
// that a test never passes on a vector nobody chose.
type Server struct {
	// URL is the OpenAI-wire base URL, ending in /v1.
	URL string

	vectors map[string][]float32
	mu      sync.Mutex
	calls   []Call
	fail    []int
}

// Call is one request the server answered.
type Call struct {
	Model  string
	Inputs []string
	Status int
}

// New serves vectors (text to vector) until the test ends.
func New(t testing.TB, vectors map[string][]float32) *Server {
	t.Helper()
	s := &Server{vectors: vectors}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// FailNext makes the next requests answer these statuses (429, 500, ...)
// in order before it answers again.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, statuses...)
}

// Calls returns the requests answered so far, failed ones included.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Tokens is how the server counts a text's tokens: its words.
func Tokens(text string) int { return len(strings.Fields(text)) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "embedtest serves POST /v1/embeddings only", http.StatusNotFound)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"input must be a list of texts"}}`, http.StatusBadRequest)
		return
	}
	call := Call{Model: req.Model, Inputs: req.Input, Status: http.StatusOK}
	s.mu.Lock()
	if len(s.fail) > 0 {
		call.Status, s.fail = s.fail[0], s.fail[1:]
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	if call.Status != http.StatusOK {
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"scripted failure"}}`, call.Status)
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]datum, len(req.Input))
	tokens := 0
	for i, text := range req.Input {
		v, ok := s.vectors[text]
		if !ok {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"embedtest has no vector for %q"}}`, text), http.StatusBadRequest)
			return
		}
		data[i] = datum{Object: "embedding", Index: i, Embedding: v}
		tokens += Tokens(text)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "model": req.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}
