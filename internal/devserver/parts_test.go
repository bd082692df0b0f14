package devserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/dawn-go/dawn/markers"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/watch"
)

func writeDevFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNeedsReload(t *testing.T) {
	dir := t.TempDir()
	writeDevFiles(t, dir, map[string]string{"main.go": "", "store.db": "", "route/agent.md": ""})
	tests := []struct {
		paths []string
		want  bool
	}{
		{[]string{"main.go"}, false},
		{[]string{"main.go", "store.db"}, false},
		{[]string{"route/agent.md"}, true},
		{[]string{"main.go", "plan.md"}, true},
		{[]string{"state.yaml"}, true},
		{[]string{"dawn.yml"}, true},
		{[]string{"PLAN.MD"}, true},
		{[]string{"route"}, true}, // a folder: a route may have appeared
		{[]string{"gone"}, true},  // removed: it may have been a route folder
		{nil, false},
	}
	for _, tt := range tests {
		var paths []string
		for _, p := range tt.paths {
			paths = append(paths, filepath.Join(dir, p))
		}
		if got := needsReload(paths); got != tt.want {
			t.Errorf("needsReload(%v) = %v, want %v", tt.paths, got, tt.want)
		}
	}
}

func TestIsGoInput(t *testing.T) {
	tests := map[string]bool{
		"main.go":             true,
		"tools/lookup.go":     true,
		"go.mod":              true,
		"sub/go.sum":          true,
		"go.work":             true,
		"main_test.go":        false,
		"tools/testdata/x.go": false,
		// The go tool skips folders starting with _ or ., such as a
		// workspace folder the model writes Go files into.
		"app/_files/main.go":       false,
		"app/.work/x.go":           false,
		"_files/go.mod":            false,
		"app/support/x/agent.md":   false,
		"README.md":                false,
		"gomod":                    false,
		filepath.Join("a", "b.go"): true,
	}
	for rel, want := range tests {
		if got := isGoInput(filepath.FromSlash(rel)); got != want {
			t.Errorf("isGoInput(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestReloadKeepsLastGoodVersion drives Reloader directly: an edit that
// breaks a working route is not applied, a route removed on purpose is, a
// new broken route does not block other edits, and a fix recovers.
func TestReloadKeepsLastGoodVersion(t *testing.T) {
	dir := t.TempDir()
	agent := "---\ndescription: %s\n---\nYou help.\n"
	writeDevFiles(t, dir, map[string]string{
		"a/agent.md": fmt.Sprintf(agent, "A1"),
		"a/plan.md":  "- [ ] one\n",
		"b/agent.md": fmt.Sprintf(agent, "B1"),
	})
	ctx := context.Background()
	load := func(ctx context.Context) (*app.App, error) {
		return app.Load(ctx, dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	}
	a, err := load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := runner.New(st, a, runner.Options{})
	var out bytes.Buffer
	r := NewReloader(load, runs, &out)
	edit := func(files map[string]string) {
		t.Helper()
		out.Reset()
		writeDevFiles(t, dir, files)
		r.Reload(ctx, watch.Batch{Paths: []string{filepath.Join(dir, "a", "agent.md")}, First: time.Now()})
	}
	desc := func(id string) string {
		if p, ok := runs.App().Routes[id]; ok {
			return p.Route.Agent.Description
		}
		return "(none)"
	}

	edit(map[string]string{"a/agent.md": "---\ndescription: A2\nbogus: 1\n---\n"})
	if desc("/a") != "A1" || !strings.Contains(out.String(), "still serving the last good version") || !strings.Contains(out.String(), filepath.Join(dir, "a", "agent.md")) {
		t.Fatalf("a broken agent.md: /a is %q, output:\n%s", desc("/a"), out.String())
	}
	edit(map[string]string{"dawn.yaml": "modle: x\n"})
	if !strings.Contains(out.String(), "broke route /a") {
		t.Errorf("still broken: output:\n%s", out.String())
	}
	edit(map[string]string{"a/agent.md": fmt.Sprintf(agent, "A2")})
	if desc("/a") != "A1" || !strings.Contains(out.String(), "broke dawn.yaml") {
		t.Fatalf("a broken dawn.yaml: /a is %q, output:\n%s", desc("/a"), out.String())
	}
	if err := os.Remove(filepath.Join(dir, "dawn.yaml")); err != nil {
		t.Fatal(err)
	}
	edit(nil)
	if desc("/a") != "A2" || !strings.Contains(out.String(), "reloaded 2 route(s)") {
		t.Fatalf("fixed: /a is %q, output:\n%s", desc("/a"), out.String())
	}
	if err := os.RemoveAll(filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	edit(map[string]string{"c/agent.md": "---\nbogus: 1\n---\n", "a/agent.md": fmt.Sprintf(agent, "A3")})
	if desc("/b") != "(none)" || desc("/a") != "A3" || !strings.Contains(out.String(), "still have problems") {
		t.Fatalf("removed b, broken new c, edited a: /a %q /b %q, output:\n%s", desc("/a"), desc("/b"), out.String())
	}
	writeDevFiles(t, dir, map[string]string{"main.go": "package main\n"})
	out.Reset()
	r.Reload(ctx, watch.Batch{Paths: []string{filepath.Join(dir, "main.go")}})
	if out.Len() != 0 {
		t.Errorf("a .go change reloaded: %s", out.String())
	}
}

func TestLineWriterFiltersReadyLine(t *testing.T) {
	var out bytes.Buffer
	var taken []string
	w := &lineWriter{out: &out, take: func(line string) bool {
		if strings.HasPrefix(line, ChildReadyPrefix) {
			taken = append(taken, line)
			return true
		}
		return false
	}}
	for _, chunk := range []string{"log one\nDawn dev ch", "ild ready at http://127.0.0.1:1\r\nlog", " two\n", "tail"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	w.Flush()
	if got := out.String(); got != "log one\nlog two\ntail\n" {
		t.Errorf("passed on %q", got)
	}
	if !slices.Equal(taken, []string{ChildReadyPrefix + "http://127.0.0.1:1"}) {
		t.Errorf("took %q", taken)
	}
}

func TestSameContents(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789"), 100_000)
	other := slices.Clone(big)
	other[len(other)-1] = 'x'
	writeDevFiles(t, dir, map[string]string{"a": string(big), "b": string(big), "c": string(other), "d": "short"})
	tests := []struct {
		a, b string
		want bool
	}{{"a", "b", true}, {"a", "c", false}, {"a", "d", false}, {"a", "missing", false}}
	for _, tt := range tests {
		if got := sameContents(filepath.Join(dir, tt.a), filepath.Join(dir, tt.b)); got != tt.want {
			t.Errorf("sameContents(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

func TestProxyWaitsForTheApp(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	p := newDevProxy()
	p.wait = 5 * time.Second
	front := httptest.NewServer(p)
	defer front.Close()

	go func() {
		time.Sleep(50 * time.Millisecond)
		p.set(u)
	}()
	resp, err := http.Get(front.URL + "/routes")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from /routes" {
		t.Fatalf("a request sent before the app was ready got %s %q", resp.Status, body)
	}

	p.clear()
	p.wait = 50 * time.Millisecond
	resp, err = http.Get(front.URL + "/routes")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct{ Kind, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Kind != "restarting" || e.Error.Message == "" {
		t.Fatalf("no app: %s %+v, want 503 with kind restarting", resp.Status, e)
	}

	p.close()
	p.wait = time.Minute
	start := time.Now()
	resp, err = http.Get(front.URL + "/routes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || time.Since(start) > 30*time.Second {
		t.Fatalf("closing: %s after %s, want 503 at once", resp.Status, time.Since(start))
	}
}

func TestProxyStreamsEvents(t *testing.T) {
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 1\nevent: plan_update\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "id: 2\nevent: done\ndata: {}\n\n")
	}))
	defer backend.Close()
	defer close(release)
	u, _ := url.Parse(backend.URL)
	p := newDevProxy()
	p.set(u)
	front := httptest.NewServer(p)
	defer front.Close()

	resp, err := http.Post(front.URL+"/threads/t/runs/stream", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		if line != "id: 1" {
			t.Fatalf("first line = %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first event did not come through while the stream was still open")
	}
}
