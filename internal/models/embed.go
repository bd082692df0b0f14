package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// embedBatch is the most texts one embedding request carries; a call with
// more is sent as several requests. Gemini's batchEmbedContents takes at
// most 100, OpenAI's /embeddings 2048.
const embedBatch = 100

// embedTimeout bounds one embedding request, retries included: a put or
// a search waits on it.
const embedTimeout = 60 * time.Second

// embedAnswerBytes bounds an embedding answer's body: 100 vectors of
// 3072 components as JSON text come to about 6 MiB.
const embedAnswerBytes = 32 << 20

// EmbedCall is one embedding request as an Embedder's observer sees it.
type EmbedCall struct {
	// Texts is how many texts the request carried.
	Texts int
	// Tokens is the input tokens the provider counted, or -1 when it
	// reports none (Gemini).
	Tokens int64
	// Duration is how long the request took, retries included.
	Duration time.Duration
	// Err is why it failed, or nil.
	Err error
}

// Embedder turns texts into vectors through a provider's embedding API:
// OpenAI's and OpenAI-compatible servers' /embeddings (Ollama's too, at
// its /v1), or Gemini's batchEmbedContents. A request answered with 429
// or a 5xx is retried as model calls are (see New). It is safe for
// concurrent use.
type Embedder struct {
	spec    Spec
	client  *http.Client
	baseURL string
	key     string
	// observe, when set, is told of every request.
	observe func(context.Context, EmbedCall)
	// requests and tokens count what the embedder has asked for.
	requests, tokens atomic.Int64
}

// NewEmbedder returns the embedder named by spec ("openai:text-embedding-3-small",
// "gemini:text-embedding-004", "ollama:nomic-embed-text",
// "openai-compatible:NAME"), configured from env as New configures a model
// of the same provider. observe, when not nil, is told of every request
// (for telemetry).
func NewEmbedder(spec string, env func(string) string, observe func(context.Context, EmbedCall)) (*Embedder, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = func(string) string { return "" }
	}
	policy, err := retryPolicyFrom(spec, env)
	if err != nil {
		return nil, err
	}
	e := &Embedder{spec: s, observe: observe, client: &http.Client{
		Transport: deadlineTransport{next: &retryTransport{base: sharedHTTPClient.Transport, spec: s.String(), policy: policy}, timeout: embedTimeout},
	}}
	switch s.Provider {
	case ProviderOpenAI:
		e.key = strings.TrimSpace(env(EnvOpenAIKey))
		if e.key == "" {
			return nil, fmt.Errorf("embedding model %q: %s is not set; export it, or set %s to an OpenAI-compatible server", s, EnvOpenAIKey, EnvOpenAIBaseURL)
		}
		e.baseURL, err = baseURLFrom(s, env, EnvOpenAIBaseURL, DefaultOpenAIBaseURL)
	case ProviderCompatible:
		if strings.TrimSpace(env(EnvCompatibleBaseURL)) == "" {
			return nil, fmt.Errorf("embedding model %q: %s is not set; set it to the server's OpenAI-compatible base URL, for example http://127.0.0.1:8000/v1", s, EnvCompatibleBaseURL)
		}
		e.baseURL, err = baseURLFrom(s, env, EnvCompatibleBaseURL, "")
		e.key = strings.TrimSpace(env(EnvCompatibleKey))
	case ProviderOllama:
		var host string
		host, err = ollamaHost(s, env(EnvOllamaHost))
		e.baseURL = host + "/v1"
	case ProviderGemini:
		e.key = strings.TrimSpace(env(EnvGeminiKey))
		if e.key == "" {
			e.key = strings.TrimSpace(env(EnvGoogleKey))
		}
		if e.key == "" {
			return nil, fmt.Errorf("embedding model %q: %s is not set; export it (or %s), and %s for a proxy", s, EnvGeminiKey, EnvGoogleKey, EnvGeminiBaseURL)
		}
		e.baseURL, err = baseURLFrom(s, env, EnvGeminiBaseURL, DefaultGeminiBaseURL)
	default:
		return nil, fmt.Errorf("embedding model %q: provider %s has no embedding API here; use openai, openai-compatible, ollama or gemini", s, s.Provider)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Spec is the embedder's name, as "openai:text-embedding-3-small".
func (e *Embedder) Spec() string { return e.spec.String() }

// Usage returns how many requests the embedder has sent and how many
// input tokens the providers counted for them (Gemini counts none).
func (e *Embedder) Usage() (requests, tokens int64) {
	return e.requests.Load(), e.tokens.Load()
}

// Embed returns one vector per text, in order, in as few requests as the
// provider allows.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		began := time.Now()
		vectors, tokens, err := e.request(ctx, batch)
		if err == nil && len(vectors) != len(batch) {
			err = fmt.Errorf("embedding model %q answered %d vectors for %d texts", e.spec, len(vectors), len(batch))
		}
		e.requests.Add(1)
		if tokens > 0 {
			e.tokens.Add(tokens)
		}
		if e.observe != nil {
			e.observe(ctx, EmbedCall{Texts: len(batch), Tokens: tokens, Duration: time.Since(began), Err: err})
		}
		if err != nil {
			return nil, err
		}
		out = append(out, vectors...)
	}
	return out, nil
}

// request sends one batch and returns its vectors and the input tokens
// counted (-1: none reported).
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, int64, error) {
	if e.spec.Provider == ProviderGemini {
		return e.gemini(ctx, texts)
	}
	var answer struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage *struct {
			PromptTokens int64 `json:"prompt_tokens"`
		} `json:"usage"`
	}
	body := map[string]any{"model": e.spec.Name, "input": texts, "encoding_format": "float"}
	if err := e.post(ctx, e.baseURL+"/embeddings", body, &answer); err != nil {
		return nil, -1, err
	}
	vectors := make([][]float32, len(texts))
	for _, d := range answer.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, -1, fmt.Errorf("embedding model %q answered a vector for input %d of %d", e.spec, d.Index, len(texts))
		}
		vectors[d.Index] = d.Embedding
	}
	for i, v := range vectors {
		if len(v) == 0 {
			return nil, -1, fmt.Errorf("embedding model %q answered no vector for input %d", e.spec, i)
		}
	}
	tokens := int64(-1)
	if answer.Usage != nil {
		tokens = answer.Usage.PromptTokens
	}
	return vectors, tokens, nil
}

// gemini sends one batch to Gemini's batchEmbedContents.
func (e *Embedder) gemini(ctx context.Context, texts []string) ([][]float32, int64, error) {
	model := "models/" + e.spec.Name
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Parts []part `json:"parts"`
	}
	type request struct {
		Model   string  `json:"model"`
		Content content `json:"content"`
	}
	reqs := make([]request, len(texts))
	for i, t := range texts {
		reqs[i] = request{Model: model, Content: content{Parts: []part{{Text: t}}}}
	}
	var answer struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := e.post(ctx, e.baseURL+"/"+model+":batchEmbedContents", map[string]any{"requests": reqs}, &answer); err != nil {
		return nil, -1, err
	}
	vectors := make([][]float32, len(answer.Embeddings))
	for i, em := range answer.Embeddings {
		vectors[i] = em.Values
	}
	return vectors, -1, nil
}

// post sends body as JSON to url and decodes the answer into answer.
func (e *Embedder) post(ctx context.Context, url string, body, answer any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	switch {
	case e.spec.Provider == ProviderGemini:
		req.Header.Set("x-goog-api-key", e.key)
	case e.key != "":
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return classify(ctx, e.spec, e.baseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, embedAnswerBytes+1))
	if err != nil {
		return classify(ctx, e.spec, e.baseURL, err)
	}
	if len(raw) > embedAnswerBytes {
		return e.fail(0, fmt.Errorf("the answer is over %d bytes", embedAnswerBytes))
	}
	if resp.StatusCode != http.StatusOK {
		return e.fail(resp.StatusCode, errors.New(strings.TrimSpace(string(raw[:min(len(raw), 512)]))))
	}
	if err := json.Unmarshal(raw, answer); err != nil {
		return e.fail(0, fmt.Errorf("the answer is not an embedding response: %w", err))
	}
	return nil
}

// fail is the *ModelError of an answer the embedder cannot use.
func (e *Embedder) fail(status int, err error) error {
	kind := KindOther
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		kind = KindAuth
	}
	if status != 0 {
		err = fmt.Errorf("HTTP %d: %w", status, err)
	}
	return &ModelError{Spec: e.spec.String(), Provider: e.spec.Provider, BaseURL: e.baseURL, Kind: kind, Status: status, Err: err}
}
