package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
)

func envOf(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		spec string
		env  map[string]string
		want []string // fragments the error must hold
	}{
		{"openai without key", "openai:gpt-4o-mini", nil,
			[]string{`model "openai:gpt-4o-mini"`, "OPENAI_API_KEY is not set", "OPENAI_BASE_URL", `"offline"`}},
		{"openai key blank", "openai:gpt-4o-mini", map[string]string{"OPENAI_API_KEY": "  "},
			[]string{"OPENAI_API_KEY is not set"}},
		{"anthropic without key", "anthropic:claude-3-5-haiku-latest", map[string]string{"OPENAI_API_KEY": "k"},
			[]string{`model "anthropic:claude-3-5-haiku-latest"`, "ANTHROPIC_API_KEY is not set"}},
		{"openai bad base url", "openai:m", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "localhost:8080"},
			[]string{`OPENAI_BASE_URL="localhost:8080" is not an http(s) URL`}},
		{"anthropic bad base url", "anthropic:m", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "ftp://x"},
			[]string{"ANTHROPIC_BASE_URL", "not an http(s) URL"}},
		{"ollama bad host", "ollama:m", map[string]string{"OLLAMA_HOST": "http://"},
			[]string{"OLLAMA_HOST", "not a host"}},
		{"unknown provider", "mistral:large", nil, []string{"openai, anthropic, gemini, ollama, openai-compatible, offline"}},
		{"empty", "", nil, []string{"empty"}},
		{"gemini without key", "gemini:gemini-2.0-flash", nil,
			[]string{`model "gemini:gemini-2.0-flash"`, "GEMINI_API_KEY is not set", "GOOGLE_API_KEY"}},
		{"openai-compatible without base url", "openai-compatible:qwen", nil,
			[]string{"OPENAI_COMPATIBLE_BASE_URL is not set", "vLLM", "LM Studio", "Ollama"}},
		{"list with a bad entry", "offline,gemini:x", nil,
			[]string{`model list "offline,gemini:x"`, "GEMINI_API_KEY is not set"}},
		{"bad retries", "offline", map[string]string{EnvRetries: "-1"},
			[]string{"DAWN_MODEL_RETRIES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.spec, envOf(tt.env))
			if err == nil {
				t.Fatalf("New(%q) = %T, want an error", tt.spec, m)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New(%q) error %q does not contain %q", tt.spec, err, w)
				}
			}
		})
	}
}

func TestNewSucceeds(t *testing.T) {
	tests := []struct {
		spec    string
		env     map[string]string
		baseURL string
	}{
		{"offline", nil, ""},
		{"openai:gpt-4o-mini", map[string]string{"OPENAI_API_KEY": "k"}, DefaultOpenAIBaseURL},
		{"openai:m", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"}, "http://127.0.0.1:8000/v1"},
		{"anthropic:m", map[string]string{"ANTHROPIC_API_KEY": "k"}, DefaultAnthropicBaseURL},
		{"anthropic:m", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}, "http://127.0.0.1:9/v1"},
		{"ollama:llama3.2", nil, "http://127.0.0.1:11434/v1"},
		{"ollama:llama3.2", map[string]string{"OLLAMA_HOST": "0.0.0.0"}, "http://127.0.0.1:11434/v1"},
		{"ollama:llama3.2", map[string]string{"OLLAMA_HOST": "10.1.2.3:9999"}, "http://10.1.2.3:9999/v1"},
		{"ollama:llama3.2", map[string]string{"OLLAMA_HOST": "https://ollama.example"}, "https://ollama.example:443/v1"},
		{"ollama:llama3.2", map[string]string{"OLLAMA_HOST": "http://[::1]:11434/"}, "http://[::1]:11434/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" "+tt.baseURL, func(t *testing.T) {
			m, err := New(tt.spec, envOf(tt.env))
			if err != nil {
				t.Fatalf("New(%q): %v", tt.spec, err)
			}
			checked, ok := m.(*checkedModel)
			if !ok {
				t.Fatalf("New(%q) = %T, want *checkedModel", tt.spec, m)
			}
			if checked.baseURL != tt.baseURL {
				t.Errorf("base URL = %q, want %q", checked.baseURL, tt.baseURL)
			}
		})
	}
}

// fakeOpenAI is a minimal OpenAI chat-completions server. It records each
// request and answers with text or with one tool call, streamed when asked.
type fakeOpenAI struct {
	mu       sync.Mutex
	requests []fakeRequest
	toolCall bool
	status   int // answer with this HTTP error status when non-zero
}

type fakeRequest struct {
	Path, Auth string
	// Raw is the body's top-level keys, to see what was sent at all.
	Raw  map[string]json.RawMessage
	Body struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req fakeRequest
	req.Path, req.Auth = r.URL.Path, r.Header.Get("Authorization")
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &req.Body)
	_ = json.Unmarshal(data, &req.Raw)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	toolCall, status := f.toolCall, f.status
	f.mu.Unlock()

	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		return
	}
	if !req.Body.Stream {
		message := `{"role":"assistant","content":"Hello there"}`
		finish := "stop"
		if toolCall {
			message = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"writeTodos","arguments":"{\"todos\":[]}"}}]}`
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":%s,"finish_reason":%q}]}`, req.Body.Model, message, finish)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
	}
	if toolCall {
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"writeTodos","arguments":""}}]}`, "null")
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"todos\":"}}]}`, "null")
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"[]}"}}]}`, `"tool_calls"`)
	} else {
		chunk(`{"role":"assistant","content":"Hello"}`, "null")
		chunk(`{"content":" there"}`, `"stop"`)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (f *fakeOpenAI) recorded() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

var writeTodosTool = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
	Name:       "writeTodos",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"todos": map[string]any{"type": "array"}}},
}}

func TestOpenAIBaseURL(t *testing.T) {
	tests := []struct {
		name      string
		stream    bool
		toolCall  bool
		wantText  string
		wantTools string // "name args" of the single tool call, if any
	}{
		{name: "text", wantText: "Hello there"},
		{name: "text streamed", stream: true, wantText: "Hello there"},
		{name: "tool call", toolCall: true, wantTools: `writeTodos {"todos":[]}`},
		{name: "tool call streamed", stream: true, toolCall: true, wantTools: `writeTodos {"todos":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeOpenAI{toolCall: tt.toolCall}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			m, err := New("openai:gpt-test", envOf(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.URL + "/v1"}))
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			opts := []llms.CallOption{llms.WithTools([]llms.Tool{writeTodosTool})}
			if tt.stream {
				opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
					streamed.Write(chunk)
					return nil
				}))
			}
			messages := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, "Be brief."),
				llms.TextParts(llms.ChatMessageTypeHuman, "Hi"),
			}
			resp, err := m.GenerateContent(context.Background(), messages, opts...)
			if err != nil {
				t.Fatal(err)
			}
			checkOpenAIRequest(t, fake.recorded(), tt.stream)
			choice := resp.Choices[0]
			if choice.Content != tt.wantText {
				t.Errorf("Content = %q, want %q", choice.Content, tt.wantText)
			}
			if tt.stream && streamed.String() != tt.wantText {
				t.Errorf("streamed %q, want only the text %q", streamed.String(), tt.wantText)
			}
			var tools []string
			for _, c := range choice.ToolCalls {
				tools = append(tools, c.FunctionCall.Name+" "+c.FunctionCall.Arguments)
			}
			if got := strings.Join(tools, "|"); got != tt.wantTools {
				t.Errorf("tool calls = %q, want %q", got, tt.wantTools)
			}
		})
	}
}

// checkOpenAIRequest checks the one request an OpenAI-wire server got
// for a call with the writeTodos tool and two messages.
func checkOpenAIRequest(t *testing.T, reqs []fakeRequest, stream bool) {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Path != "/v1/chat/completions" || req.Auth != "Bearer sk-test" || req.Body.Model != "gpt-test" {
		t.Errorf("request path %q auth %q model %q", req.Path, req.Auth, req.Body.Model)
	}
	if req.Body.Stream != stream || len(req.Body.Messages) != 2 || len(req.Body.Tools) != 1 {
		t.Errorf("request stream=%v messages=%d tools=%d", req.Body.Stream, len(req.Body.Messages), len(req.Body.Tools))
	}
}

func TestSeveralToolResultsReachOpenAI(t *testing.T) {
	fake := &fakeOpenAI{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	m, err := New("openai:gpt-test", envOf(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	call := func(id string) llms.ToolCall {
		return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: "{}"}}
	}
	messages := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "Hi"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call("a"), call("b")}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "a", Name: "writeTodos", Content: "ok"},
			llms.ToolCallResponse{ToolCallID: "b", Name: "writeTodos", Content: "ok"},
		}},
	}
	if _, err := m.GenerateContent(context.Background(), messages); err != nil {
		t.Fatal(err)
	}
	if got := len(fake.recorded()[0].Body.Messages); got != 4 {
		t.Errorf("server got %d messages, want 4 (user, assistant, two tool results)", got)
	}
	if len(messages[2].Parts) != 2 {
		t.Errorf("the caller's messages were changed")
	}
}

func TestModelErrors(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/v1"
	closed.Close()

	refusing := httptest.NewServer(&fakeOpenAI{status: http.StatusUnauthorized})
	defer refusing.Close()
	failing := httptest.NewServer(&fakeOpenAI{status: http.StatusInternalServerError})
	defer failing.Close()

	tests := []struct {
		name     string
		spec     string
		env      map[string]string
		wantKind ErrorKind
		want     []string
	}{
		{"openai unreachable", "openai:m", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": closedURL},
			KindUnreachable, []string{`model "openai:m"`, "could not reach the server at " + closedURL, "OPENAI_BASE_URL"}},
		{"ollama unreachable", "ollama:llama3.2", map[string]string{"OLLAMA_HOST": strings.TrimSuffix(closedURL, "/v1")},
			KindUnreachable, []string{`model "ollama:llama3.2"`, "could not reach the server at " + closedURL, "OLLAMA_HOST", "ollama serve"}},
		{"anthropic unreachable", "anthropic:m", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": closedURL},
			KindUnreachable, []string{"could not reach the server at " + closedURL, "ANTHROPIC_BASE_URL"}},
		{"key refused", "openai:m", map[string]string{"OPENAI_API_KEY": "bad", "OPENAI_BASE_URL": refusing.URL},
			KindAuth, []string{"refused the API key (HTTP 401)", "check OPENAI_API_KEY"}},
		{"server error", "openai:m", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": failing.URL, EnvRetryMaxWait: "1ms"},
			KindOther, []string{`model "openai:m"`, "500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.spec, envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")})
			var me *ModelError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *ModelError", err, err)
			}
			if me.Kind != tt.wantKind || me.Spec != tt.spec || me.Err == nil || errors.Unwrap(me) != me.Err {
				t.Errorf("ModelError kind %q spec %q err %v; want kind %q", me.Kind, me.Spec, me.Err, tt.wantKind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestModelErrorCanceled(t *testing.T) {
	for _, spec := range []string{"offline", "openai:m"} {
		t.Run(spec, func(t *testing.T) {
			m, err := New(spec, envOf(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")})
			var me *ModelError
			if !errors.As(err, &me) || me.Kind != KindCanceled || !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want a canceled *ModelError that is context.Canceled", err)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	spec := Spec{Provider: ProviderAnthropic, Name: "m"}
	tests := []struct {
		err  error
		kind ErrorKind
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}, KindUnreachable},
		{&net.DNSError{Err: "no such host", Name: "x.invalid"}, KindUnreachable},
		{errors.New("network error: failed to reach API server"), KindUnreachable},
		{errors.New("request timeout: network operation exceeded timeout"), KindTimeout},
		{errors.New("API returned unexpected status code: 403: forbidden"), KindAuth},
		{llms.NewError(llms.ErrCodeAuthentication, "anthropic", "bad key"), KindAuth},
		{errors.New("API returned unexpected status code: 429: slow down"), KindOther},
		{&ModelError{Kind: KindTimeout, Err: errors.New("inner")}, KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			got := classify(context.Background(), spec, "http://x", tt.err)
			if got.Kind != tt.kind {
				t.Errorf("classify(%v).Kind = %q, want %q", tt.err, got.Kind, tt.kind)
			}
		})
	}
}

func TestSplitMessages(t *testing.T) {
	call := llms.ToolCall{ID: "a", FunctionCall: &llms.FunctionCall{Name: "x", Arguments: "{}"}}
	result := llms.ToolCallResponse{ToolCallID: "a", Content: "ok"}
	assistant := llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.TextPart(""), call, call}}
	tool := llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{result, result}}
	tests := []struct {
		provider string
		want     []int // parts per message after splitting
	}{
		{ProviderOpenAI, []int{3, 1, 1}},
		{ProviderOllama, []int{3, 1, 1}},
		{ProviderAnthropic, []int{1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			out := splitMessages(tt.provider, []llms.MessageContent{assistant, tool})
			var got []int
			for _, mc := range out {
				got = append(got, len(mc.Parts))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parts per message = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsToolCallDelta(t *testing.T) {
	tests := []struct {
		chunk string
		want  bool
	}{
		{`[{"id":"call_1","type":"function","function":{"name":"x","arguments":""}}]`, true},
		{`[{"type":"","function":{"name":"","arguments":"{}"}}]`, true},
		{`[1, 2]`, false},
		{`[{"a":1}]`, false},
		{`[ok] done`, false},
		{`Hello`, false},
	}
	for _, tt := range tests {
		if got := isToolCallDelta([]byte(tt.chunk)); got != tt.want {
			t.Errorf("isToolCallDelta(%s) = %v, want %v", tt.chunk, got, tt.want)
		}
	}
}

// TestTemperatureOnlyWhenAsked: a request carries temperature only when the
// caller set one (0 included); otherwise the provider's default applies.
// langchaingo itself always writes "temperature":0.
func TestTemperatureOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		opts   []llms.CallOption
		want   string // the temperature sent, "" for none
	}{
		{name: "unset", want: ""},
		{name: "unset streamed", stream: true, want: ""},
		{name: "zero", opts: []llms.CallOption{llms.WithTemperature(0)}, want: "0"},
		{name: "0.7 streamed", stream: true, opts: []llms.CallOption{llms.WithTemperature(0.7)}, want: "0.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeOpenAI{}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			m, err := New("openai:gpt-test", envOf(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}))
			if err != nil {
				t.Fatal(err)
			}
			opts := tt.opts
			if tt.stream {
				opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
			}
			if _, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")}, opts...); err != nil {
				t.Fatal(err)
			}
			raw := fake.recorded()[0].Raw
			if got := string(raw["temperature"]); got != tt.want {
				t.Errorf("temperature sent = %q, want %q (body keys %v)", got, tt.want, keysOf(raw))
			}
			if len(raw["messages"]) == 0 || string(raw["model"]) != `"gpt-test"` {
				t.Errorf("the rest of the body was lost: keys %v", keysOf(raw))
			}
		})
	}
	t.Run("anthropic", func(t *testing.T) {
		var mu sync.Mutex
		var bodies []map[string]json.RawMessage
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var raw map[string]json.RawMessage
			data, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(data, &raw)
			mu.Lock()
			bodies = append(bodies, raw)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		}))
		defer srv.Close()
		m, err := New("anthropic:m", envOf(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}))
		if err != nil {
			t.Fatal(err)
		}
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")}
		if _, err := m.GenerateContent(context.Background(), msgs); err != nil {
			t.Fatal(err)
		}
		if _, err := m.GenerateContent(context.Background(), msgs, llms.WithTemperature(0.5)); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := string(bodies[0]["temperature"]); got != "" {
			t.Errorf("unset: temperature sent = %q, want none", got)
		}
		if got := string(bodies[1]["temperature"]); got != "0.5" {
			t.Errorf("set: temperature sent = %q, want 0.5", got)
		}
	})
}

func keysOf(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestWithoutKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"model":"m","temperature":0}`, `{"model":"m"}`},
		{`{"temperature":0.7,"model":"m"}`, `{"model":"m"}`},
		{`{"temperature":0}`, `{}`},
		{`{"a":[1,{"temperature":2}],"temperature" : 1e-3 ,"b":"x"}`, `{"a":[1,{"temperature":2}],"b":"x"}`},
		{`{"content":"say \"temperature\": hot","temperature":0,"tools":[{"temperature":{"type":"number"}}]}`, `{"content":"say \"temperature\": hot","tools":[{"temperature":{"type":"number"}}]}`},
		{`{"a":"temperature","b":{"temperature":1}}`, ""},
		{`{"a":"\\","temperature":1}`, `{"a":"\\"}`},
		{`not json "temperature"`, ""},
	} {
		got, ok := withoutKey([]byte(tc.in), "temperature")
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("withoutKey(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
}
