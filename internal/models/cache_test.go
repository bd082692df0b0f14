package models

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// recorder keeps the JSON bodies a loopback provider got.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func (r *recorder) add(req *http.Request) map[string]json.RawMessage {
	data, _ := io.ReadAll(req.Body)
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, raw)
	return raw
}

func (r *recorder) all() []map[string]json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), r.bodies...)
}

// conversation is a request as the agent lays it out: the system prompt,
// the conversation, then the per-turn state block as a late system
// message.
var conversation = []llms.MessageContent{
	llms.TextParts(llms.ChatMessageTypeSystem, "You are terse."),
	llms.TextParts(llms.ChatMessageTypeHuman, "Hi"),
	llms.TextParts(llms.ChatMessageTypeSystem, "## Current state\n\nCurrent plan:\n- [pending] Greet\n"),
}

// TestOpenAIPromptCache: over the OpenAI wire, a call whose context names
// a prompt-cache key sends it as prompt_cache_key (one without sends
// none), and the cached tokens of usage.prompt_tokens_details are read,
// streamed or not.
func TestOpenAIPromptCache(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := rec.add(r)
		usage := `{"prompt_tokens":2048,"completion_tokens":3,"total_tokens":2051,"prompt_tokens_details":{"cached_tokens":1920}}`
		if string(body["stream"]) != "true" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":%s}`, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", usage)
	}))
	defer srv.Close()
	m, err := New("openai:gpt-4o-mini", envOf(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithPromptCacheKey(context.Background(), "thread-1")
	stream := llms.WithStreamingFunc(func(context.Context, []byte) error { return nil })
	for _, opts := range [][]llms.CallOption{nil, {stream}} {
		resp, err := m.GenerateContent(ctx, conversation, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := CachedInputTokens(resp); got != 1920 {
			t.Errorf("cached input tokens = %d, want 1920 (streamed: %v)", got, opts != nil)
		}
	}
	if _, err := m.GenerateContent(context.Background(), conversation); err != nil {
		t.Fatal(err)
	}
	bodies := rec.all()
	for i, b := range bodies[:2] {
		if got := string(b["prompt_cache_key"]); got != `"thread-1"` {
			t.Errorf("request %d: prompt_cache_key = %s, want \"thread-1\" (keys %v)", i, got, keysOf(b))
		}
		var msgs []struct{ Role string }
		_ = json.Unmarshal(b["messages"], &msgs)
		if len(msgs) != 3 || msgs[2].Role != "system" {
			t.Errorf("request %d: messages %s; the state block stays the last, a system message", i, b["messages"])
		}
	}
	if _, ok := bodies[2]["prompt_cache_key"]; ok {
		t.Errorf("a call without a key sent prompt_cache_key %s", bodies[2]["prompt_cache_key"])
	}
}

// TestAnthropicPromptCache: over the Anthropic wire, the state block goes
// as a user message after the conversation (not into the system prompt),
// cache breakpoints sit at the end of the system prompt and on the
// conversation's last block before the state block, and
// cache_read_input_tokens is read.
func TestAnthropicPromptCache(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":40,"output_tokens":1,"cache_read_input_tokens":1500,"cache_creation_input_tokens":0}}`)
	}))
	defer srv.Close()
	m, err := New("anthropic:claude-sonnet-4-5", envOf(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.GenerateContent(context.Background(), conversation)
	if err != nil {
		t.Fatal(err)
	}
	if got := CachedInputTokens(resp); got != 1500 {
		t.Errorf("cached input tokens = %d, want 1500", got)
	}
	body := rec.all()[0]
	var system []struct {
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if err := json.Unmarshal(body["system"], &system); err != nil || len(system) != 1 || system[0].Text != "You are terse." || string(system[0].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("system = %s, want the system prompt alone, with a breakpoint", body["system"])
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"content"`
	}
	if err := json.Unmarshal(body["messages"], &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("messages = %s (%v), want the conversation and the state block", body["messages"], err)
	}
	if msgs[0].Role != "user" || msgs[0].Content[0].Text != "Hi" || string(msgs[0].Content[0].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("the conversation's last message is %+v, want Hi with a breakpoint", msgs[0])
	}
	if msgs[1].Role != "user" || msgs[1].Content[0].Text != conversation[2].Parts[0].(llms.TextContent).Text || msgs[1].Content[0].CacheControl != nil {
		t.Errorf("the state block is %+v, want it as a user message without a breakpoint", msgs[1])
	}
}

func TestWithMember(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"model":"m"}`, `{"prompt_cache_key":"k","model":"m"}`},
		{`{}`, `{"prompt_cache_key":"k"}`},
		{` { }`, `{"prompt_cache_key":"k" }`},
		{`{"prompt_cache_key":"mine"}`, `{"prompt_cache_key":"mine"}`},
		{`[1]`, `[1]`},
	} {
		if got := string(withMember([]byte(tc.in), "prompt_cache_key", "k")); got != tc.want {
			t.Errorf("withMember(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
