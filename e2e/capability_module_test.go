package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCapabilityFromAnotherModule: an app in its own Go module writes a
// capability (testdata/greeter/greeting) and registers it with
// dawn.WithCapability in its main. Built with go build against this
// checkout and started as `dawn start`, it detects the capability beside
// agent.md, lists it in GET /routes, and a model over the OpenAI wire
// calls its tool, whose output reaches the model and the stream.
func TestCapabilityFromAnotherModule(t *testing.T) {
	bin := buildModule(t, "greeter")
	mock := &greetModel{}
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)

	app := t.TempDir()
	writeFiles(t, app, map[string]string{
		"desk/agent.md":    "---\nmodel: openai:gpt-4o-mini\n---\nYou greet visitors.",
		"desk/greeting.md": "Welcome aboard",
		"other/agent.md":   "---\nmodel: openai:gpt-4o-mini\n---\nNo greetings here.",
	})
	url := startDawn(t, bin, app, "OPENAI_API_KEY=test", "OPENAI_BASE_URL="+srv.URL+"/v1", "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))

	var routes []struct {
		ID           string   `json:"id"`
		Capabilities []string `json:"capabilities"`
	}
	getJSON(t, url+"/routes", &routes)
	caps := map[string]string{}
	for _, r := range routes {
		caps[r.ID] = strings.Join(r.Capabilities, ",")
	}
	if !strings.Contains(caps["/desk"], "greeting") || strings.Contains(caps["/other"], "greeting") {
		t.Fatalf("GET /routes capabilities = %v; want greeting on /desk only", caps)
	}

	resp, err := http.Post(url+"/threads/t1/runs/stream", "application/json",
		strings.NewReader(`{"route":"/desk","input":{"messages":[{"role":"user","content":"Greet Ada"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream: %d %s", resp.StatusCode, body)
	}
	stream := string(body)
	for _, want := range []string{"event: tool_result", "event: greeted\n" + `data: "Welcome aboard, Ada!"`, `data: "Done: Welcome aboard, Ada!"`} {
		if !strings.Contains(stream, want) {
			t.Errorf("the stream lacks %q:\n%s", want, stream)
		}
	}
	if got := mock.toolResults(); len(got) != 1 || got[0] != "Welcome aboard, Ada!" {
		t.Errorf("the model saw tool results %q, want the greeting", got)
	}
}

// buildModule builds the main package of the Go module in
// testdata/<name> against this checkout, as an app outside this module
// is built, and returns the binary. It runs offline: the module's
// requirements are this module's, already in the module cache.
func buildModule(t *testing.T, name string) string {
	t.Helper()
	root := repoRoot(t)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "e2e", "testdata", name))); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod = []byte(strings.Replace(string(mod), "=> ../../..", "=> "+root, 1))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{"go.mod": mod, "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -modcacherw", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, out)
	}
	return bin
}

// getJSON decodes the JSON answer of GET url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d: %v", url, resp.StatusCode, err)
	}
}

// greetModel is a model on the OpenAI wire: it asks for greet {"name":
// "Ada"}, then answers "Done: " and the tool's output. It keeps the tool
// results it is sent.
type greetModel struct {
	mu      sync.Mutex
	results []string
}

func (m *greetModel) toolResults() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.results...)
}

func (m *greetModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	result := ""
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			result = fmt.Sprint(msg.Content)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if result == "" {
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"greet","arguments":"{\"name\":\"Ada\"}"}}]}}]}`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
	} else {
		m.mu.Lock()
		m.results = append(m.results, result)
		m.mu.Unlock()
		answer, _ := json.Marshal("Done: " + result)
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`+"\n\n", answer)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestDocsCodeIsReal: every Go block of docs/capabilities.md and
// docs/client.md names, after "go", the file it is copied from (the
// greeter module for capabilities, the repository for the client), and is
// in that file as it is.
func TestDocsCodeIsReal(t *testing.T) {
	root := repoRoot(t)
	for doc, base := range map[string]string{
		"capabilities.md": filepath.Join(root, "e2e", "testdata", "greeter"),
		"client.md":       root,
		"store.md":        root,
		"webhooks.md":     root,
		"auth.md":         root,
	} {
		text, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		blocks := 0
		for _, part := range strings.Split(string(text), "```go")[1:] {
			info, rest, _ := strings.Cut(part, "\n")
			block, _, _ := strings.Cut(rest, "```")
			file := strings.TrimSpace(info)
			if file == "" {
				t.Errorf("docs/%s has a Go block that names no file:\n%s", doc, block)
				continue
			}
			src, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(file)))
			if err != nil || !strings.Contains(string(src), block) {
				t.Errorf("docs/%s: this block is not in %s (%v):\n%s", doc, file, err, block)
			}
			blocks++
		}
		if blocks == 0 {
			t.Errorf("docs/%s has no Go block", doc)
		}
	}
}
