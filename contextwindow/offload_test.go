package contextwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// bigLog is exportLog's output: n bytes of numbered lines with a
// character of two bytes in each, so that pages can cut one.
func bigLog(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: état nominal\n", i)
	}
	return b.String()[:n]
}

const logSize = 1 << 20

var storedID = regexp.MustCompile(`stored as "(out_[^"]+)"`)

// lastTool is the text of the last tool message of a request.
func lastTool(msgs []llms.MessageContent) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if r, ok := msgs[i].Parts[0].(llms.ToolCallResponse); ok {
			return r.Content
		}
	}
	return ""
}

// TestOffloadPreviewAndPages: a 1 MB tool output over
// tool_output_max_bytes reaches the model as a preview with its size and
// an id, the store keeps it whole, and
// readToolOutput pages through it by byte offsets, on whole characters.
func TestOffloadPreviewAndPages(t *testing.T) {
	log := bigLog(logSize)
	export := capabilities.AppTool{Tool: capabilities.Func("exportLog", "Export the log.", func(context.Context, struct{}) (string, error) { return log, nil })}
	var id string
	model := &scriptModel{}
	model.script = func(n int) *llms.ContentChoice {
		switch n {
		case 0:
			return call(n, "exportLog", struct{}{})
		case 1:
			m := storedID.FindStringSubmatch(lastTool(model.requests[len(model.requests)-1].msgs))
			if m == nil {
				return &llms.ContentChoice{Content: "no id"}
			}
			id = m[1]
			return call(n, "readToolOutput", map[string]any{"id": id, "offset": 500000, "limit": 4096})
		case 2:
			return call(n, "readToolOutput", map[string]any{"id": id, "offset": logSize - 100})
		}
		return &llms.ContentChoice{Content: "Read."}
	}
	dir := apptest.WriteApp(t, map[string]string{"ops/agent.md": "---\ncontext: {tool_output_max_bytes: 8192, max_input_tokens: 0}\n---\nYou read logs."})
	srv := dawntest.New(t, dir, model, dawntest.Options{Tools: []capabilities.AppTool{export}})
	res := srv.Run(t, "big", "/ops", "Export the log.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	reqs := model.all()
	preview := lastTool(reqs[1].msgs)
	if len(preview) > 8192+400 || !strings.Contains(preview, fmt.Sprintf("is %d bytes", logSize)) || !strings.HasPrefix(strings.SplitN(preview, "\n", 2)[1], log[:100]) || !strings.HasSuffix(preview, log[logSize-100:]) {
		t.Fatalf("the model saw %d bytes:\n%.600s", len(preview), preview)
	}
	if id == "" {
		t.Fatal("the preview gave no id")
	}
	// Offset 500000 falls inside "é": the page starts on the next
	// character and ends on a whole one.
	page := lastTool(reqs[2].msgs)
	header, body, _ := strings.Cut(page, "\n")
	from := 500000
	for log[from]&0xC0 == 0x80 {
		from++
	}
	if !strings.HasPrefix(log[from:], body) || len(body) < 4090 || len(body) > 4096 {
		t.Fatalf("page at 500000: %q, %d bytes", header, len(body))
	}
	if want := fmt.Sprintf("[bytes %d to %d of %d of %q; next offset %d]", from, from+len(body), logSize, id, from+len(body)); header != want {
		t.Fatalf("page header %q, want %q", header, want)
	}
	last := lastTool(reqs[3].msgs)
	if !strings.HasSuffix(last, log[logSize-100:]) || !strings.Contains(last, "; the end]") {
		t.Fatalf("last page: %q", last)
	}
	var outputs []string
	for _, e := range res.Events {
		if e.Type == stream.TypeToolResult {
			var d struct {
				Output string `json:"output"`
			}
			_ = json.Unmarshal(e.Data, &d)
			outputs = append(outputs, d.Output)
		}
	}
	// The output is over limits.tool_output_bytes: its event carries the
	// preview, whose id reads the whole (see TestToolResultEventBounded).
	if len(outputs) != 3 || outputs[0] != preview {
		t.Fatalf("the tool_result of exportLog holds %d bytes, want the %d of the preview", len(outputs[0]), len(preview))
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	_ = json.Unmarshal(res.Values["messages"], &msgs)
	if len(msgs) < 3 || msgs[2].Role != "tool" || msgs[2].Content != preview {
		t.Fatalf("the thread's tool message is not the preview the model saw")
	}
	checkServed(t, srv.URL, "big", id, log)
}

// checkServed checks GET /threads/:id/tool-outputs/:output_id: the whole
// output, a page of it, and 404 for an unknown output or thread.
func checkServed(t *testing.T, base, threadID, id, log string) {
	t.Helper()
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	code, body, h := get("/threads/" + threadID + "/tool-outputs/" + id)
	if code != http.StatusOK || body != log || h.Get("Dawn-Total-Bytes") != strconv.Itoa(len(log)) || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET the output: %d, %d bytes, headers %v", code, len(body), h)
	}
	if code, body, _ := get("/threads/" + threadID + "/tool-outputs/" + id + "?offset=10&limit=20"); code != http.StatusOK || body != log[10:30] {
		t.Fatalf("GET a page: %d %q", code, body)
	}
	for _, path := range []string{"/threads/" + threadID + "/tool-outputs/out_nope", "/threads/nope/tool-outputs/" + id} {
		if code, body, _ := get(path); code != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	}
	if code, _, _ := get("/threads/" + threadID + "/tool-outputs/" + id + "?offset=-1"); code != http.StatusBadRequest {
		t.Fatalf("GET with offset -1: %d", code)
	}
}

// TestReadToolOutputUnknownID: an id the thread does not keep is an error
// the model sees, naming the id.
func TestReadToolOutputUnknownID(t *testing.T) {
	model := &scriptModel{script: func(n int) *llms.ContentChoice {
		if n == 0 {
			return call(n, "readToolOutput", map[string]any{"id": "out_nope"})
		}
		return &llms.ContentChoice{Content: "ok"}
	}}
	dir := apptest.WriteApp(t, map[string]string{"ops/agent.md": "---\ncontext: true\n---\nYou read logs."})
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	if res := srv.Run(t, "t", "/ops", "Read."); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := lastTool(model.all()[1].msgs); !strings.Contains(got, `this thread has no stored output "out_nope"`) {
		t.Fatalf("the model saw %q", got)
	}
}

// TestToolResultEventBounded: a tool output over limits.tool_output_bytes
// is not carried whole by its tool_result event, which the stream fans
// out and the store keeps: the event carries what the model saw (the
// preview with the stored output's id, or the runtime's cut), flagged
// truncated with the output's size. An output under the limit is carried
// whole, also when offload stores it.
func TestToolResultEventBounded(t *testing.T) {
	tests := []struct {
		name, agent string
		size        int
		whole       bool
		want        string // in the event's output when it is cut
	}{
		{"cut by the runtime", "---\ntools: [exportLog]\n---\nYou read logs.", 2 << 20, false, "[output truncated: "},
		{"stored by offload", "---\ncontext: {tool_output_max_bytes: 8192, max_input_tokens: 0}\n---\nYou read logs.", 2 << 20, false, "it is stored as \"out_"},
		{"under the limit", "---\ncontext: {tool_output_max_bytes: 8192, max_input_tokens: 0}\n---\nYou read logs.", 27 * 760, true, ""}, // whole lines, whole characters
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := bigLog(tt.size)
			export := capabilities.AppTool{Tool: capabilities.Func("exportLog", "Export the log.", func(context.Context, struct{}) (string, error) { return log, nil })}
			model := &scriptModel{script: func(n int) *llms.ContentChoice {
				if n == 0 {
					return call(n, "exportLog", struct{}{})
				}
				return &llms.ContentChoice{Content: "Read."}
			}}
			dir := apptest.WriteApp(t, map[string]string{"ops/agent.md": tt.agent})
			srv := dawntest.New(t, dir, model, dawntest.Options{Tools: []capabilities.AppTool{export}})
			res := srv.Run(t, "t", "/ops", "Export the log.")
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			checkResultEvent(t, res.Events, log, lastTool(model.all()[1].msgs), tt.whole, tt.want)
		})
	}
}

// checkResultEvent checks the tool_result event among events of a call
// whose output was log and which the model was shown as seen: carried
// whole, or cut to what the model saw with want in it.
func checkResultEvent(t *testing.T, events []stream.Event, log, seen string, whole bool, want string) {
	t.Helper()
	for _, e := range events {
		if e.Type != stream.TypeToolResult {
			continue
		}
		var d struct {
			Output      string `json:"output"`
			Truncated   bool   `json:"truncated"`
			OutputBytes int    `json:"output_bytes"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		switch {
		case whole && (d.Output != log || d.Truncated || len(e.Data) > len(log)*11/10+200):
			t.Fatalf("an output under the limit: the event holds %d bytes, truncated %v", len(d.Output), d.Truncated)
		case !whole && (len(e.Data) > 72<<10 || !d.Truncated || d.OutputBytes != len(log) || d.Output != seen || !strings.Contains(d.Output, want)):
			t.Fatalf("the tool_result event is %d bytes (truncated %v, output_bytes %d), holds what the model saw: %v; want at most 72 KiB, flagged, with %q", len(e.Data), d.Truncated, d.OutputBytes, d.Output == seen, want)
		}
		return
	}
	t.Fatal("no tool_result event")
}
