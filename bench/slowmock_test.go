package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
)

// TestSlowMockSpeaksOpenAI drives the --inflight mock through Dawn's own
// OpenAI client, streamed and not, over HTTP/1.1 and HTTPS: the first
// request gets the writeTodos call, the one with a tool result the answer,
// each with usage; and the mock books both calls to the run's reference.
func TestSlowMockSpeaksOpenAI(t *testing.T) {
	for _, tls := range []bool{false, true} {
		ca := ""
		if tls {
			ca = filepath.Join(t.TempDir(), "ca.pem")
			t.Setenv("SSL_CERT_FILE", ca) // crypto/x509 reads it once, at the first HTTPS call: this one
		}
		m, err := startSlowMock(0, ca)
		if err != nil {
			t.Fatal(err)
		}
		defer m.close()
		env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": m.url}
		model, err := models.New("openai:gpt-4o-mini", func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		for _, streamed := range []bool{false, true} {
			checkSlowMockRun(t, m, model, streamed)
		}
	}
}

// checkSlowMockRun makes a run's two model calls to the mock, streamed or
// not, and checks the answers, the usage and what the mock booked.
func checkSlowMockRun(t *testing.T, m *slowMock, model llms.Model, streamed bool) {
	t.Helper()
	ref := "t-" + m.url[:5] + map[bool]string{false: "-json", true: "-sse"}[streamed]
	var opts []llms.CallOption
	if streamed {
		opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	}
	user := llms.TextParts(llms.ChatMessageTypeHuman, userMessage+refMarker+ref+")")
	first, err := model.GenerateContent(context.Background(), []llms.MessageContent{user}, opts...)
	if err != nil {
		t.Fatalf("%s streamed=%v: %v", m.url, streamed, err)
	}
	c := first.Choices[0]
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "writeTodos" || c.ToolCalls[0].FunctionCall.Arguments != mockPlanArgs {
		t.Fatalf("%s streamed=%v: first answer %+v, want the writeTodos call", m.url, streamed, c)
	}
	if in, out, _ := models.Usage(first); in <= 0 || out <= 0 {
		t.Errorf("%s streamed=%v: usage %d/%d, want both reported", m.url, streamed, in, out)
	}
	tool := llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: c.ToolCalls[0].ID, Name: "writeTodos", Content: "ok"}}}
	call := llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{c.ToolCalls[0]}}
	second, err := model.GenerateContent(context.Background(), []llms.MessageContent{user, call, tool}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.Choices[0].Content; got != mockAnswer {
		t.Errorf("%s streamed=%v: second answer %q, want %q", m.url, streamed, got, mockAnswer)
	}
	if u := m.use(ref); u.Calls != 2 || u.Bytes == 0 || u.Prompt == 0 {
		t.Errorf("%s streamed=%v: the mock booked %+v to the run, want 2 calls with bytes and tokens", m.url, streamed, u)
	}
}
