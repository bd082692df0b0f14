package apptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// This file holds what the tests of the HTTP API and of each wire
// (internal/server, internal/server/langgraph, internal/server/agui) share:
// the apps they serve, and the checks of what the API answers.

// WriteApp writes files (slash paths relative to the app folder) into a new
// temp app folder and returns it.
func WriteApp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// SupportApp is a small app with planning on a dynamic route and a
// subagent that has its own plan.
func SupportApp(t testing.TB) string {
	return WriteApp(t, map[string]string{
		"support/[tenant]/agent.md":              "---\ndescription: support\n---\nYou help customers.",
		"support/[tenant]/plan.md":               "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
		"research/agent.md":                      "Lead researcher.",
		"research/subagents/researcher/agent.md": "Researcher.",
		"research/subagents/researcher/plan.md":  "- [ ] Find sources\n- [ ] Summarize findings\n",
		"plain/agent.md":                         "No plan here.",
	})
}

// FourTodos is a writeTodos input for SupportApp's four planning items,
// those before active completed and active in progress.
func FourTodos(active int) map[string]any {
	items := []string{"Understand the customer request", "Check account context", "Decide whether to answer or escalate", "Write the final response"}
	var todos []map[string]string
	for i, c := range items {
		status := "pending"
		switch {
		case i < active:
			status = "completed"
		case i == active:
			status = "in_progress"
		}
		todos = append(todos, map[string]string{"content": c, "status": status})
	}
	return map[string]any{"todos": todos}
}

// EnforcedApp is an app with a harness route "job" (enforce: true, front
// matter front, items steps and the postconditions post) and a route
// "open" with the same plan, not enforced.
func EnforcedApp(t testing.TB, front string, items int, post ...string) string {
	var b strings.Builder
	b.WriteString("---\nenforce: true\n" + front + "---\n")
	for i := 1; i <= items; i++ {
		fmt.Fprintf(&b, "- [ ] Step %d\n", i)
	}
	if len(post) > 0 {
		b.WriteString("\n## Done when\n")
		for _, p := range post {
			b.WriteString("- [ ] " + p + "\n")
		}
	}
	return WriteApp(t, map[string]string{
		"job/agent.md":  "You do the job.",
		"job/plan.md":   b.String(),
		"open/agent.md": "No harness here.",
		"open/plan.md":  strings.ReplaceAll(b.String(), "---\nenforce: true\n"+front+"---\n", ""),
	})
}

// FuzzSupportFiles is the app the HTTP fuzz targets serve: a planning route
// with a dynamic segment and state.yaml fields, and a route with a subagent.
var FuzzSupportFiles = map[string]string{
	"support/[tenant]/agent.md":              "---\ndescription: support\n---\nYou help customers.",
	"support/[tenant]/plan.md":               "- [ ] Understand the customer request\n- [ ] Write the final response\n",
	"support/[tenant]/state.yaml":            "priority:\n  type: string\n  default: normal\ntags:\n  type: array\n",
	"research/agent.md":                      "Lead researcher.",
	"research/subagents/researcher/agent.md": "Researcher.",
}

// RunBody is a Dawn run request for route with one user message.
func RunBody(route, message string) string {
	b, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(b)
}

// LastUser is the text of the last user message of a model request.
func LastUser(req []llms.MessageContent) string {
	for i := len(req) - 1; i >= 0; i-- {
		if req[i].Role == llms.ChatMessageTypeHuman {
			return fmt.Sprint(req[i].Parts[0])
		}
	}
	return ""
}

// GetJSON decodes a GET response into v and returns the status.
func GetJSON(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, data)
		}
	}
	return resp.StatusCode
}

// APIError is the API's JSON error as tests read it.
type APIError struct {
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// DecodeError reads resp's body as the API's JSON error, failing t when it
// is not one.
func DecodeError(t testing.TB, resp *http.Response) APIError {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e APIError
	if err := json.Unmarshal(data, &e); err != nil || e.Error.Kind == "" {
		t.Fatalf("status %d: body is not a JSON error: %s", resp.StatusCode, data)
	}
	return e
}

// StackTrace matches what a Go panic or stack dump prints.
var StackTrace = regexp.MustCompile(`goroutine \d+ \[|\.go:\d+|panic: `)

// ServeRecorded sends one request straight to the handler, with no network.
func ServeRecorded(h http.Handler, method, target string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// CheckErrorBody fails unless a non-2xx body is {"error":{"kind":...}}.
func CheckErrorBody(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	var e struct {
		Error *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Kind == "" || e.Error.Message == "" {
		t.Fatalf("status %d with a body that is not {\"error\":{\"kind\",\"message\"}}: %.300q (%v)", rec.Code, rec.Body.Bytes(), err)
	}
}

// DeleteThread deletes a thread, waiting out the moment after done when
// the runner has not freed the thread yet (409).
func DeleteThread(h http.Handler, escaped string) {
	for range 1000 {
		if ServeRecorded(h, http.MethodDelete, "/threads/"+escaped, nil).Code != http.StatusConflict {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// CheckLGSSE parses a LangGraph-dialect stream body and fails unless it is
// well formed: every part's data JSON, ids rising, metadata first.
func CheckLGSSE(t testing.TB, body []byte) []stream.Event {
	t.Helper()
	r := stream.NewReader(bytes.NewReader(body))
	var events []stream.Event
	var last int64
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SSE does not parse after %d events: %v", len(events), err)
		}
		if !json.Valid(e.Data) {
			t.Fatalf("part %d (%s) data is not JSON: %.200q", len(events), e.Type, e.Data)
		}
		if e.ID != 0 {
			if e.ID <= last {
				t.Fatalf("part %d (%s) has id %d after id %d", len(events), e.Type, e.ID, last)
			}
			last = e.ID
		}
		events = append(events, e)
	}
	if len(events) == 0 || events[0].Type != "metadata" {
		t.Fatalf("a LangGraph stream starts with metadata; got %d events", len(events))
	}
	return events
}

// PatchOp is one JSON Patch operation of an AG-UI STATE_DELTA event.
type PatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// AGUIStateDeltas posts body to the AG-UI endpoint url and returns the
// stream it answered, whole, and the operations of its STATE_DELTA
// events in order; with beforeAnswer, only those sent before the
// answer's TEXT_MESSAGE_START.
func AGUIStateDeltas(t testing.TB, url, body string, beforeAnswer bool) (string, []PatchOp) {
	t.Helper()
	resp := PostJSON(t, url, body)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var ops []PatchOp
	for _, line := range strings.Split(string(raw), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e struct {
			Type  string          `json:"type"`
			Delta json.RawMessage `json:"delta"` // a string in TOOL_CALL_ARGS
		}
		if json.Unmarshal([]byte(data), &e) != nil {
			t.Fatalf("an AG-UI event that is not JSON: %s", data)
		}
		if beforeAnswer && e.Type == "TEXT_MESSAGE_START" {
			break
		}
		if e.Type != "STATE_DELTA" {
			continue
		}
		var delta []PatchOp
		if err := json.Unmarshal(e.Delta, &delta); err != nil {
			t.Fatalf("a STATE_DELTA whose delta is no JSON Patch: %s", data)
		}
		ops = append(ops, delta...)
	}
	return string(raw), ops
}
