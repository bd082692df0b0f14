package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
)

// writeApp writes files (slash paths relative to the app folder) into a new
// temp app folder and returns it.
func writeApp(t *testing.T, files map[string]string) string {
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

// supportApp is a small app with planning on a dynamic route and a
// subagent that has its own plan.
func supportApp(t *testing.T) string {
	return writeApp(t, map[string]string{
		"support/[tenant]/agent.md":              "---\ndescription: support\n---\nYou help customers.",
		"support/[tenant]/plan.md":               "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
		"research/agent.md":                      "Lead researcher.",
		"research/subagents/researcher/agent.md": "Researcher.",
		"research/subagents/researcher/plan.md":  "- [ ] Find sources\n- [ ] Summarize findings\n",
		"plain/agent.md":                         "No plan here.",
	})
}

// post sends a JSON body and returns the response.
var post = apptest.PostJSON

// getJSON decodes a GET response into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
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

// readSSE reads an SSE response to its end.
var readSSE = apptest.ReadSSE

type apiErr struct {
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeErr(t *testing.T, resp *http.Response) apiErr {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e apiErr
	if err := json.Unmarshal(data, &e); err != nil || e.Error.Kind == "" {
		t.Fatalf("status %d: body is not a JSON error: %s", resp.StatusCode, data)
	}
	return e
}

func runBody(route, message string) string {
	b, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(b)
}

var _ = bytes.NewReader
