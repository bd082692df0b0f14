package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// supportApp writes an app with one planning route on the OpenAI model and
// returns its folder.
func supportApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"support/[tenant]/agent.md": "---\nmodel: openai:gpt-4o-mini\ndescription: support\n---\nYou help customers.\n",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
	}
	writeFiles(t, dir, files)
	return dir
}

// writeFiles writes files (slash paths to contents) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runBody is a run request for route with the fixture's user message.
func runBody(route string) string {
	body, _ := json.Marshal(map[string]any{
		"route": route,
		"input": map[string]any{"messages": []map[string]string{{"role": "user", "content": userMessage}}},
	})
	return string(body)
}

func postJSON(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// apiError is the body of an error response.
type apiError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func decodeAPIError(t *testing.T, resp *http.Response) apiError {
	t.Helper()
	defer resp.Body.Close()
	var body struct {
		Error apiError `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("error body %q: %v", data, err)
	}
	return body.Error
}

// readEvents reads an SSE response to its end with stream.Reader.
func readEvents(t *testing.T, resp *http.Response) []stream.Event {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := decodeAPIError(t, resp)
		t.Fatalf("stream: %d %s: %s", resp.StatusCode, e.Kind, e.Message)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream Content-Type = %q", ct)
	}
	r := stream.NewReader(resp.Body)
	var events []stream.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading SSE: %v", err)
		}
		events = append(events, e)
	}
	if len(events) == 0 {
		t.Fatal("the stream carried no events")
	}
	return events
}

// chatRequest is what aimock's journal keeps of a chat completion request.
type chatRequest struct {
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
}

// chatMessage is one message of a chat completion request.
type chatMessage struct {
	Role string `json:"role"`
	// Content is a string or an array of parts.
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// text is the message's text: its string content, or its text parts joined.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// chatRequests returns the chat completion requests aimock at mock has
// received, oldest first.
func chatRequests(t *testing.T, mock string) []chatRequest {
	t.Helper()
	resp, err := http.Get(mock + "/__aimock/journal?path=/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct {
		Body chatRequest `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatalf("aimock journal: %v", err)
	}
	if len(entries) == 0 {
		t.Fatal("aimock received no chat completion request")
	}
	out := make([]chatRequest, len(entries))
	for i, e := range entries {
		out[i] = e.Body
	}
	return out
}
