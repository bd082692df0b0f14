package models

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// streamChunk is the size of each text delta the test server streams, as
// small as the deltas of real servers (a token or two).
const streamChunk = 4

// streamingServer serves OpenAI-wire chat completions that stream an
// answer of size bytes in streamChunk-byte deltas, then a tool call in two
// deltas, reasoning, and usage.
func streamingServer(t testing.TB, size int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := w.(io.Writer)
		fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think "}}]}`+"\n\n")
		fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"reasoning_content":"hard"}}]}`+"\n\n")
		for sent := 0; sent < size; sent += streamChunk {
			fmt.Fprintf(bw, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", strings.Repeat("a", min(streamChunk, size-sent)))
		}
		fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]}}]}`+"\n\n")
		fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n")
		fmt.Fprint(bw, `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":11,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":5}}}`+"\n\n")
		fmt.Fprint(bw, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// streamedAnswer asks an openai: model at srv for a streamed answer and
// returns the response and the text the streaming func saw.
func streamedAnswer(t testing.TB, srv *httptest.Server) (*llms.ContentResponse, string) {
	t.Helper()
	m, err := New("openai:gpt-4o-mini", func(k string) string {
		return map[string]string{EnvOpenAIKey: "k", EnvOpenAIBaseURL: srv.URL + "/v1", EnvRetries: "0"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			streamed.Write(chunk)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return resp, streamed.String()
}

// TestStreamedAnswerIsWhole: a streamed answer arrives whole, in the
// streaming func and in the response, with its tool call, reasoning and
// usage.
func TestStreamedAnswerIsWhole(t *testing.T) {
	const size = 1000
	resp, streamed := streamedAnswer(t, streamingServer(t, size))
	want := strings.Repeat("a", size)
	if streamed != want {
		t.Errorf("streamed %d bytes, want %d", len(streamed), size)
	}
	c := resp.Choices[0]
	if c.Content != want {
		t.Errorf("content has %d bytes, want %d", len(c.Content), size)
	}
	if c.ReasoningContent != "think hard" || c.GenerationInfo["ThinkingContent"] != "think hard" {
		t.Errorf("reasoning = %q, ThinkingContent = %v", c.ReasoningContent, c.GenerationInfo["ThinkingContent"])
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "lookup" || c.ToolCalls[0].FunctionCall.Arguments != `{"q":"x"}` {
		t.Errorf("tool calls = %+v", c.ToolCalls)
	}
	if in, out, reasons := Usage(resp); in != 7 || out != 11 || len(reasons) != 1 || reasons[0] != "tool_calls" {
		t.Errorf("usage = %d in, %d out, %v", in, out, reasons)
	}
	if got := c.GenerationInfo["PromptCachedTokens"]; got != 5 {
		t.Errorf("PromptCachedTokens = %v", got)
	}
}

// allocatedBy returns the bytes allocated while streaming an answer of
// size bytes (the server's own allocations included, which are linear).
func allocatedBy(t testing.TB, size int) uint64 {
	srv := streamingServer(t, size)
	streamedAnswer(t, srv) // warm the connection
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	streamedAnswer(t, srv)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestStreamedAnswerAllocatesLinearly: streaming an answer allocates in
// proportion to its size. Joining each delta onto the whole answer so far
// allocated ~n²/2 bytes: 8 GB for 256 KB in 4-byte deltas.
func TestStreamedAnswerAllocatesLinearly(t *testing.T) {
	small, large := allocatedBy(t, 16<<10), allocatedBy(t, 64<<10)
	// Four times the answer costs about four times the bytes; joining
	// onto the whole answer costs about sixteen times.
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Errorf("a 64 KB answer allocates %.1f times what a 16 KB one does (%d and %d bytes); want about 4", ratio, large, small)
	}
	const size = 256 << 10
	// A linear bound: a few KB per streamed delta (both JSON decodes,
	// the HTTP and SSE framing, the test server's writes).
	if got, bound := allocatedBy(t, size), uint64(size/streamChunk)*4<<10; got > bound {
		t.Errorf("a %d KB answer in %d-byte deltas allocates %d MB; want under %d MB", size>>10, streamChunk, got>>20, bound>>20)
	}
}

// BenchmarkStreamedAnswer reports the bytes allocated per streamed answer
// of each size (go test -bench StreamedAnswer -benchmem ./internal/models).
func BenchmarkStreamedAnswer(b *testing.B) {
	for _, size := range []int{16 << 10, 64 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			srv := streamingServer(b, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				streamedAnswer(b, srv)
			}
		})
	}
}
