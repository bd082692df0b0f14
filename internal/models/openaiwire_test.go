package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// wireServer answers every chat request with answer (streamed when the
// request asks) and status, and keeps each request's body and headers.
type wireServer struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	status  int
	answer  string // a JSON answer, or SSE lines for a streamed one
	stream  string
}

func (s *wireServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	status, answer, stream := s.status, s.answer, s.stream
	s.mu.Unlock()
	if status != 0 && status != http.StatusOK {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
		return
	}
	if strings.Contains(string(body), `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, answer)
}

// wirePair returns a model on the fast path and the same model on
// langchaingo's client, both talking to srv.
func wirePair(t testing.TB, spec string, srv *httptest.Server) (fast, slow llms.Model) {
	t.Helper()
	env := map[string]string{EnvOpenAIKey: "sk-test", EnvOpenAIBaseURL: srv.URL + "/v1", EnvOpenAIOrg: "org-1",
		EnvCompatibleBaseURL: srv.URL + "/v1", EnvRetries: "0"}
	m, err := New(spec, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	checked := m.(*checkedModel)
	w := checked.inner.(*wireModel)
	if w.fast == nil {
		t.Fatalf("%s has no fast path", spec)
	}
	plain := *checked
	plain.inner = &wireModel{LLM: w.LLM}
	return m, &plain
}

// wireConversation is a whole run's second request: the system prompt, the
// user, the assistant's text and parallel tool calls, their results, and
// the state block, with text that encoding/json escapes.
func wireConversation() []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You plan.\n<rules> & \"quotes\" \\ tabs\t\u2028ok\x01 é 🙂 \xff"),
		llms.TextParts(llms.ChatMessageTypeHuman, "Help me with my account"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
			llms.TextPart("Let me plan."),
			llms.ToolCall{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: `{"todos":[{"content":"a<b","status":"pending"}]}`}},
			llms.ToolCall{ID: "call_2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}},
		}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "call_1", Name: "writeTodos", Content: "ok: 1 item"},
			llms.ToolCallResponse{ToolCallID: "call_2", Name: "lookup", Content: ""},
		}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
			llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{Name: "lookup", Arguments: `{}`}},
		}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{Content: "no id"}}},
		llms.TextParts(llms.ChatMessageTypeSystem, "## Current state\n\n- [ ] a"),
	}
}

// wireTools are tools as the agent passes them: schemas as
// json.RawMessage, one with spaces and HTML characters to compact and
// escape.
func wireTools() []llms.Tool {
	return []llms.Tool{
		{Type: "function", Function: &llms.FunctionDefinition{Name: "writeTodos", Description: "Replace the <plan> & list.",
			Parameters: json.RawMessage(`{ "type": "object", "properties": { "todos": {"type":"array","description":"a<b"} }, "required": ["todos"] }`)}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "mapped", Parameters: map[string]any{"type": "object", "b": 1, "a": "<"}}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "none"}},
	}
}

// TestWireRequestsMatchLangchaingo: the fast path sends the bytes and
// headers langchaingo's client sends, after Dawn's edits (the
// prompt-cache key, no temperature unless set), for every kind of call
// the agent makes.
func TestWireRequestsMatchLangchaingo(t *testing.T) {
	stream := llms.WithStreamingFunc(func(context.Context, []byte) error { return nil })
	cases := []struct {
		name     string
		spec     string
		cacheKey string
		msgs     []llms.MessageContent
		opts     []llms.CallOption
	}{
		{"first turn", "openai:gpt-4o-mini", "thread-1", wireConversation()[:2], []llms.CallOption{llms.WithTools(wireTools()[:1])}},
		{"whole run, streamed", "openai:gpt-4o-mini", "thread-<1>", wireConversation(), []llms.CallOption{llms.WithTools(wireTools()), stream}},
		{"temperature and token limit", "openai:gpt-4o-mini", "", wireConversation(), []llms.CallOption{llms.WithTemperature(0.3), llms.WithMaxTokens(99)}},
		{"temperature zero", "openai:gpt-4o-mini", "k", wireConversation()[:2], []llms.CallOption{llms.WithTemperature(0)}},
		{"tiny temperature", "openai:gpt-4o-mini", "k", wireConversation()[:2], []llms.CallOption{llms.WithTemperature(1e-7)}},
		{"reasoning model drops temperature", "openai:gpt-5-mini", "k", wireConversation()[:2], []llms.CallOption{llms.WithTemperature(0.5)}},
		{"long cache key", "openai:gpt-4o-mini", strings.Repeat("t", 100), wireConversation()[:2], nil},
		{"compatible sends no cache key", "openai-compatible:qwen", "thread-1", wireConversation(), []llms.CallOption{llms.WithTools(wireTools()), stream}},
		{"empty messages", "openai:gpt-4o-mini", "", []llms.MessageContent{{Role: llms.ChatMessageTypeHuman}, {Role: llms.ChatMessageTypeAI}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := &wireServer{answer: `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`, stream: "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n"}
			srv := httptest.NewServer(ws)
			defer srv.Close()
			fast, slow := wirePair(t, tc.spec, srv)
			if _, ok := fast.(*checkedModel).inner.(*wireModel).fast.prepare(splitMessages(ProviderOpenAI, tc.msgs), tc.opts); !ok {
				t.Fatal("the fast path does not take the call")
			}
			ctx := WithPromptCacheKey(context.Background(), tc.cacheKey)
			for _, m := range []llms.Model{fast, slow} {
				if _, err := m.GenerateContent(ctx, tc.msgs, tc.opts...); err != nil {
					t.Fatal(err)
				}
			}
			if len(ws.bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(ws.bodies))
			}
			if string(ws.bodies[0]) != string(ws.bodies[1]) {
				t.Errorf("bodies differ:\nfast: %s\nslow: %s", ws.bodies[0], ws.bodies[1])
			}
			for _, h := range []string{"Content-Type", "Authorization", "OpenAI-Organization", "Content-Length"} {
				if f, s := ws.headers[0].Get(h), ws.headers[1].Get(h); f != s {
					t.Errorf("header %s: fast %q, slow %q", h, f, s)
				}
			}
		})
	}
}

// TestWireAnswersMatchLangchaingo: the fast path reads every answer into
// the response langchaingo's client returns (text, reasoning, tool calls
// parallel and streamed in pieces, finish reason, usage with cached
// tokens), streams the same text, and fails with the same errors.
func TestWireAnswersMatchLangchaingo(t *testing.T) {
	sse := func(events ...string) string {
		var b strings.Builder
		for _, e := range events {
			b.WriteString("data: " + e + "\n\n")
		}
		return b.String() + "data: [DONE]\n\n"
	}
	cases := []struct {
		name   string
		status int
		answer string
		stream string
	}{
		{name: "text with usage and cached tokens",
			answer: `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34,"prompt_tokens_details":{"cached_tokens":16}}}`,
			stream: sse(`{"id":"c","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, `{"choices":[{"index":0,"delta":{"content":"Do"}}]}`, `{"choices":[{"index":0,"delta":{"content":"ne."},"finish_reason":"stop"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34,"prompt_tokens_details":{"cached_tokens":16}}}`)},
		{name: "parallel tool calls, arguments in pieces",
			answer: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"writeTodos","arguments":"{\"todos\":[]}"}},{"id":"b","type":"function","function":{"name":"lookup","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`,
			stream: sse(`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"writeTodos","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"todos\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":[]}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"lookup","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`)},
		{name: "reasoning",
			answer: `{"choices":[{"message":{"content":"42","reasoning_content":"think"},"finish_reason":"stop"}]}`,
			stream: sse(`{"choices":[{"delta":{"reasoning_content":"thi"}}]}`, `{"choices":[{"delta":{"reasoning_content":"nk"}}]}`, `{"choices":[{"delta":{"content":"42"},"finish_reason":"stop"}]}`)},
		{name: "skipped lines and a late empty finish",
			answer: `{"choices":[{"message":{"content":"a"},"finish_reason":"length"}],"extra":[1,2]} trailing`,
			stream: ": keep-alive\n\nevent: x\ndata: not json\n\ndata:{\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}\r\n\r\n" + sse(`{"choices":[{"delta":{}}]}`)},
		{name: "stream without [DONE]", answer: `{"choices":[{"message":{"content":"x"}}]}`, stream: "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"},
		{name: "no choices", answer: `{"choices":[]}`, stream: sse(`{"choices":[]}`)},
		{name: "not JSON", answer: `<html>`, stream: "<html>"},
		{name: "401 with message", status: 401, answer: `{"error":{"message":"Incorrect API key provided"}}`, stream: `{"error":{"message":"Incorrect API key provided"}}`},
		{name: "400 without body", status: 400},
		{name: "404 model", status: 404, answer: `{"error":{"message":"model not found"}}`, stream: `{"error":{"message":"model not found"}}`},
		{name: "429 not retried", status: 429, answer: `{"error":{"message":"slow down"}}`, stream: `{"error":{"message":"slow down"}}`},
		{name: "500", status: 500, answer: `oops`, stream: `oops`},
	}
	for _, tc := range cases {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, streamed), func(t *testing.T) {
				srv := httptest.NewServer(&wireServer{status: tc.status, answer: tc.answer, stream: tc.stream})
				defer srv.Close()
				fast, slow := wirePair(t, "openai:gpt-4o-mini", srv)
				fastResp, fastText, fastErr := wireAsk(fast, streamed)
				slowResp, slowText, slowErr := wireAsk(slow, streamed)
				if !reflect.DeepEqual(fastResp, slowResp) {
					t.Errorf("responses differ:\nfast: %s\nslow: %s", dumpResponse(fastResp), dumpResponse(slowResp))
				}
				if fastText != slowText {
					t.Errorf("streamed text: fast %q, slow %q", fastText, slowText)
				}
				if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
					t.Errorf("errors differ:\nfast: %v\nslow: %v", fastErr, slowErr)
				}
				var fe, se *ModelError
				if errors.As(fastErr, &fe) != errors.As(slowErr, &se) || fe != nil && (fe.Kind != se.Kind || fe.Status != se.Status) {
					t.Errorf("error kinds differ: fast %+v, slow %+v", fe, se)
				}
			})
		}
	}
}

// wireAsk makes one call, streamed or not, and returns what it gave.
func wireAsk(m llms.Model, streamed bool) (*llms.ContentResponse, string, error) {
	var text strings.Builder
	opts := []llms.CallOption{llms.WithTools(wireTools()[:2])}
	if streamed {
		opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			text.Write(chunk)
			return nil
		}))
	}
	resp, err := m.GenerateContent(context.Background(), wireConversation()[:2], opts...)
	return resp, text.String(), err
}

func dumpResponse(resp *llms.ContentResponse) string {
	if resp == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(resp)
	return string(b)
}

// TestWireToolSchemasEncodedOnce: a route's tools are encoded on the
// first call and reused after, while a changed tool is encoded anew.
func TestWireToolSchemasEncodedOnce(t *testing.T) {
	var c toolCache
	tools := wireTools()
	first, err := c.encoded(tools[0])
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.encoded(tools[0])
	if &first[0] != &again[0] {
		t.Error("the same tool was encoded again")
	}
	changed := tools[0]
	changed.Function = &llms.FunctionDefinition{Name: "writeTodos", Description: "other", Parameters: tools[0].Function.Parameters}
	other, _ := c.encoded(changed)
	if string(other) == string(first) {
		t.Error("a tool with another description was served the first one's encoding")
	}
	want, _ := json.Marshal(wireTool{Type: "function", Function: wireFunction{Name: "writeTodos", Description: "Replace the <plan> & list.", Parameters: tools[0].Function.Parameters}})
	if string(first) != string(want) {
		t.Errorf("encoded %s, want %s", first, want)
	}
}

// TestWireFallsBack: a call the fast path does not cover goes to
// langchaingo's client, which still answers it.
func TestWireFallsBack(t *testing.T) {
	w := &openAIWire{}
	for name, call := range map[string]struct {
		msgs []llms.MessageContent
		opts []llms.CallOption
	}{
		"json mode":      {wireConversation()[:2], []llms.CallOption{llms.WithJSONMode()}},
		"model option":   {wireConversation()[:2], []llms.CallOption{llms.WithModel("gpt-4o")}},
		"stop words":     {wireConversation()[:2], []llms.CallOption{llms.WithStopWords([]string{"x"})}},
		"image":          {[]llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.ImageURLContent{URL: "http://x"}}}}, nil},
		"two texts":      {[]llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextPart("a"), llms.TextPart("b")}}}, nil},
		"function role":  {[]llms.MessageContent{{Role: llms.ChatMessageTypeFunction, Parts: []llms.ContentPart{llms.ToolCallResponse{Name: "f", Content: "x"}}}}, nil},
		"reasoning func": {wireConversation()[:2], []llms.CallOption{llms.WithStreamingReasoningFunc(func(context.Context, []byte, []byte) error { return nil })}},
	} {
		if _, ok := w.prepare(call.msgs, call.opts); ok {
			t.Errorf("%s: the fast path takes a call it does not cover", name)
		}
	}
	if newOpenAIWire(nil, "http://x", "k", "", "o1-mini", true) != nil {
		t.Error("o1-mini, whose system messages langchaingo folds into the user's, has a fast path")
	}

	ws := &wireServer{answer: `{"choices":[{"message":{"content":"{}"},"finish_reason":"stop"}]}`}
	srv := httptest.NewServer(ws)
	defer srv.Close()
	fast, _ := wirePair(t, "openai:gpt-4o-mini", srv)
	resp, err := fast.GenerateContent(context.Background(), wireConversation()[:2], llms.WithJSONMode())
	if err != nil || resp.Choices[0].Content != "{}" {
		t.Fatalf("json mode call: %v, %v", resp, err)
	}
	if !strings.Contains(string(ws.bodies[0]), `"response_format":{"type":"json_object"}`) {
		t.Errorf("json mode request lacks its response format: %s", ws.bodies[0])
	}
}

// TestWireCancel: a call whose context ends, before the answer or in the
// middle of a streamed one, returns at once with a canceled ModelError,
// and leaves no goroutine behind.
func TestWireCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	fast, _ := wirePair(t, "openai:gpt-4o-mini", srv)
	for _, streamed := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var opts []llms.CallOption
		got := make(chan string, 1)
		if streamed {
			opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				got <- string(chunk)
				return nil
			}))
		}
		done := make(chan error, 1)
		go func() {
			_, err := fast.GenerateContent(ctx, wireConversation()[:2], opts...)
			done <- err
		}()
		if streamed {
			if chunk := <-got; chunk != "par" {
				t.Fatalf("streamed %q before the cut", chunk)
			}
		} else {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		select {
		case err := <-done:
			var me *ModelError
			if !errors.As(err, &me) || me.Kind != KindCanceled {
				t.Errorf("stream=%v: error %v, want a canceled ModelError", streamed, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("stream=%v: the call did not return after its context ended", streamed)
		}
	}
}

// TestWireRetry: a 429 or 5xx is tried again below the fast path, each
// failed try reported to the call's observer, and the answer that follows
// is the call's.
func TestWireRetry(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		tries++
		n := tries
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}}`)
	}))
	defer srv.Close()
	m, err := New("openai:gpt-4o-mini", envOf(map[string]string{EnvOpenAIKey: "k", EnvOpenAIBaseURL: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	var attempts []Attempt
	ctx := WithAttemptObserver(context.Background(), func(a Attempt) { attempts = append(attempts, a) })
	resp, err := m.GenerateContent(ctx, wireConversation()[:2])
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 1 || attempts[0].Status != http.StatusTooManyRequests {
		t.Errorf("attempts = %+v, want one 429", attempts)
	}
	if in, out, _ := Usage(resp); in != 3 || out != 1 || CachedInputTokens(resp) != 2 {
		t.Errorf("usage %d in, %d out, %d cached; want 3, 1, 2", in, out, CachedInputTokens(resp))
	}
}

// TestAppendJSONString: strings are written as encoding/json writes them.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\x00\x01\x1f\b\f\n\r\t\\", "\u2028\u2029", "é🙂", "\xff\xfe", "a\xc3", strings.Repeat("ü", 40)} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "<&>", "\u2028", "\xff", "a\"b\\c\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkOpenAIWireCall is one model call of the workload's run (the
// second: the conversation with the writeTodos result, the tools) over
// loopback HTTP, on the fast path and on langchaingo's client (go test
// -run '^$' -bench OpenAIWireCall -benchmem ./internal/models).
func BenchmarkOpenAIWireCall(b *testing.B) {
	ws := &wireServer{
		answer: `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"I have planned your request and will follow up shortly."},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":12,"total_tokens":312}}`,
		stream: "data: {\"choices\":[{\"delta\":{\"content\":\"I have planned your request\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\" and will follow up shortly.\"},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":12,\"total_tokens\":312}}\n\ndata: [DONE]\n\n",
	}
	srv := httptest.NewServer(ws)
	defer srv.Close()
	fast, slow := wirePair(b, "openai:gpt-4o-mini", srv)
	msgs := wireConversation()
	ctx := WithPromptCacheKey(context.Background(), "3f2b6c1e-6a63-4c1e-9d1e-2b7f0a9c4d11")
	for _, streamed := range []bool{false, true} {
		opts := []llms.CallOption{llms.WithTools(wireTools()[:2])}
		if streamed {
			opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		}
		for _, m := range []struct {
			name  string
			model llms.Model
		}{{"fast", fast}, {"langchaingo", slow}} {
			b.Run(fmt.Sprintf("stream=%v/%s", streamed, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.model.GenerateContent(ctx, msgs, opts...); err != nil {
						b.Fatal(err)
					}
					ws.mu.Lock()
					ws.bodies, ws.headers = ws.bodies[:0], ws.headers[:0]
					ws.mu.Unlock()
				}
			})
		}
	}
}

// FuzzWireStream: any streamed answer gives the same response, streamed
// text and error on the fast path as on langchaingo's client, but for the
// differences bench/README.md lists (answers on which langchaingo panics
// or fails on a long line, and legacy function_call deltas, are skipped).
func FuzzWireStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"Do\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ne.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"w\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":2}}}\n\n")
	f.Add(": ping\r\n\r\ndata:{\"choices\":[{\"delta\":{\"reasoning_content\":\"r\",\"content\":\"a\"}}]} x\r\n\r\nevent: e\ndata: nope\n")
	body := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, <-body)
	}))
	defer srv.Close()
	fast, slow := wirePair(f, "openai:gpt-4o-mini", srv)
	f.Fuzz(func(t *testing.T, stream string) {
		if strings.Contains(stream, "function_call") || strings.Contains(stream, "null") || len(stream) > 60<<10 {
			t.Skip()
		}
		ask := func(m llms.Model) (resp *llms.ContentResponse, text string, err error, panicked bool) {
			defer func() {
				if recover() != nil {
					panicked = true
				}
			}()
			body <- stream
			resp, text, err = wireAsk(m, true)
			return resp, text, err, false
		}
		slowResp, slowText, slowErr, panicked := ask(slow)
		if panicked {
			t.Skip()
		}
		fastResp, fastText, fastErr, _ := ask(fast)
		if !reflect.DeepEqual(fastResp, slowResp) || fastText != slowText || fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
			t.Errorf("stream %q:\nfast: %s %q %v\nslow: %s %q %v", stream, dumpResponse(fastResp), fastText, fastErr, dumpResponse(slowResp), slowText, slowErr)
		}
	})
}
