//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// offloadLog is bigapp's exportLog output.
func offloadLog() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %07d: état nominal\n", i)
	}
	return b.String()[:1<<20]
}

// pageModel is an OpenAI chat-completions server for the offload test. A
// request whose last message is the user's "Export the log." calls
// exportLog; one whose last message is the user's "Read from N." calls
// readToolOutput at offset N with the id the thread's earlier preview
// gave; any request that ends with a tool result is answered "Done." and
// that result kept, by tool call id.
type pageModel struct {
	mu      sync.Mutex
	results map[string]string
	calls   int
}

var (
	previewID = regexp.MustCompile(`stored as \\?"(out_[0-9a-f-]+)\\?"`)
	readFrom  = regexp.MustCompile(`^Read from (\d+)\.$`)
)

type wireMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
}

func (m *pageModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body struct {
		Stream   bool          `json:"stream"`
		Messages []wireMessage `json:"messages"`
	}
	_ = json.Unmarshal(data, &body)
	last := body.Messages[len(body.Messages)-1]
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	var name, args, text string
	switch {
	case last.Role == "tool":
		m.mu.Lock()
		m.results[last.ToolCallID] = last.Content
		m.mu.Unlock()
		text = "Done."
	case last.Content == "Export the log.":
		name, args = "exportLog", "{}"
	case readFrom.MatchString(last.Content):
		id := previewID.FindStringSubmatch(string(data))
		if id == nil {
			text = "no stored output in the thread"
			break
		}
		name, args = "readToolOutput", fmt.Sprintf(`{"id":%q,"offset":%s,"limit":4096}`, id[1], readFrom.FindStringSubmatch(last.Content)[1])
	default:
		text = "I do not follow."
	}
	writeChat(w, body.Stream, fmt.Sprintf("call_%d", n), name, args, text)
}

// writeChat writes a chat completion, streamed or not: a tool call when
// name is set, else text.
func writeChat(w http.ResponseWriter, streamed bool, id, name, args, text string) {
	msg := map[string]any{"role": "assistant", "content": text}
	finish := "stop"
	if name != "" {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"index": 0, "id": id, "type": "function", "function": map[string]string{"name": name, "arguments": args}}}}
		finish = "tool_calls"
	}
	if !streamed {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-page",
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-page",
		"choices": []map[string]any{{"index": 0, "delta": msg, "finish_reason": finish}}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
}

// TestOffloadAcrossReplicas: on two `dawn start` replicas of an app
// binary sharing one Postgres database, a run on replica A gets a 1 MiB
// tool output, which the model sees as a preview with an id, and so does
// the stream (flagged truncated); a later run of the thread on replica B pages
// through it with readToolOutput and reads exactly the bytes at the
// offset it asked for.
func TestOffloadAcrossReplicas(t *testing.T) {
	dsn := pgtest.Database(t)
	bin := filepath.Join(buildDir, "bigapp")
	if err := goBuild(bin, "./reliability/testdata/bigapp"); err != nil {
		t.Fatal(err)
	}
	model := &pageModel{results: map[string]string{}}
	mock := httptest.NewServer(model)
	t.Cleanup(mock.Close)
	dir := writeApp(t, map[string]string{
		"ops/agent.md": "---\nmodel: openai:gpt-page\ncontext: {tool_output_max_bytes: 8192}\n---\nYou read logs.\n",
	})
	env := []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + mock.URL + "/v1", "DAWN_STORE=" + dsn, "DAWN_STORE_LEASE=" + replicaLease}
	a := startBinary(t, bin, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	b := startBinary(t, bin, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	ca, cb := newClient(a.url), newClient(b.url)
	defer ca.close()
	defer cb.close()
	log := offloadLog()

	events, err := postStream(ca, "/threads/big/runs/stream", runBody("/ops", "Export the log."))
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Output      string `json:"output"`
		Truncated   bool   `json:"truncated"`
		OutputBytes int    `json:"output_bytes"`
	}
	for _, e := range events {
		if e.Type == "tool_result" {
			_ = json.Unmarshal(e.Data, &shown)
		}
	}
	model.mu.Lock()
	preview := model.results["call_1"]
	model.mu.Unlock()
	if len(preview) > 9000 || !strings.Contains(preview, "is 1048576 bytes") {
		t.Fatalf("the model saw %d bytes of exportLog's output:\n%.400s", len(preview), preview)
	}
	// The event carries what the model saw, not the whole megabyte, which
	// the thread keeps for readToolOutput and GET .../tool-outputs/:id.
	if shown.Output != preview || !shown.Truncated || shown.OutputBytes != len(log) {
		t.Fatalf("replica A's tool_result holds %d bytes (truncated %v, output_bytes %d), want the model's %d-byte preview of %d (events %v)",
			len(shown.Output), shown.Truncated, shown.OutputBytes, len(preview), len(log), eventTypes(events))
	}

	const offset = 700000
	events, err = postStream(cb, "/threads/big/runs/stream", runBody("/ops", fmt.Sprintf("Read from %d.", offset)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(eventTypes(events), ","); !strings.Contains(got, ":tool_call,") || !strings.Contains(got, ":tool_result,") {
		t.Fatalf("replica B's run: %s", got)
	}
	model.mu.Lock()
	page := model.results["call_3"]
	model.mu.Unlock()
	header, body, _ := strings.Cut(page, "\n")
	if !strings.HasPrefix(header, fmt.Sprintf("[bytes %d to ", offset)) || len(body) < 4090 || body != log[offset:offset+len(body)] {
		t.Fatalf("replica B read %q and %d bytes that are not the log's at %d", header, len(body), offset)
	}
}
