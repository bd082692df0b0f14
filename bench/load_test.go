package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/tokens"
)

// TestLoadClientRunsTheWorkload: the load tool's client drives runs/wait and
// runs/stream on a real server and sees the plan.
func TestLoadClientRunsTheWorkload(t *testing.T) {
	dir := t.TempDir()
	route := filepath.Join(dir, "support", "[tenant]")
	if err := os.MkdirAll(route, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"agent.md": "You help customers.",
		"plan.md":  "- [ ] Understand the request\n- [ ] Answer\n",
	} {
		if err := os.WriteFile(filepath.Join(route, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(apptest.New(t, dir, models.NewOffline(), apptest.Options{}).Serve(t), "/support/acme", 2)
	if out, err := c.wait(t.Context(), "w1"); err != nil || len(out) == 0 {
		t.Fatalf("wait = %s, %v", out, err)
	}
	_, counts, err := c.streamToPlan(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if counts["plan_update"] == 0 || counts["done"] != 1 {
		t.Fatalf("event counts %v, want plan updates and one done", counts)
	}
	if _, err := newClient(c.api.BaseURL, "/nowhere", 1).wait(t.Context(), "w2"); err == nil {
		t.Fatal("wait on a missing route succeeded")
	}
}

// TestPromptTokens counts what the model reads: message text, tool-call
// arguments and tool definitions, not the JSON around them.
func TestPromptTokens(t *testing.T) {
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"hello world"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"writeTodos","arguments":"hello world"}}]}],` +
		`"tools":[{"type":"function"}]}`)
	want := tokens.Count("hello world")*2 + tokens.Count("writeTodos") + tokens.Count(`[{"type":"function"}]`)
	if got := promptTokens(body); got != want || got == 0 {
		t.Errorf("promptTokens = %d, want %d", got, want)
	}
}

// TestComparisonAlternatesRounds: --url2 measures both servers every round
// and prints each figure with its ratio.
func TestComparisonAlternatesRounds(t *testing.T) {
	dir := t.TempDir()
	if err := writeWorkloadApp(dir, ""); err != nil {
		t.Fatal(err)
	}
	a := apptest.New(t, dir, models.NewOffline(), apptest.Options{}).Serve(t)
	b := apptest.New(t, dir, models.NewOffline(), apptest.Options{}).Serve(t)
	o := options{url: a, url2: b, route: "/support/acme", runs: 3, concurrency: 2, streamRuns: 2, rounds: 3, warmup: 1}
	c, err := runComparison(t.Context(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 4 // no aimock, so no byte counts
	if runtime.GOOS == "linux" {
		want += 2 // the server's CPU per run: in-process, so this process's
	}
	if len(c.figures) != want {
		t.Fatalf("%d figures, want %d", len(c.figures), want)
	}
	for _, f := range c.figures {
		if len(f.a) != 3 || len(f.b) != 3 {
			t.Errorf("%s: %d rounds on A, %d on B, want 3 each", f.name, len(f.a), len(f.b))
		}
	}
	var out strings.Builder
	c.write(&out)
	if !strings.Contains(out.String(), "B/A") || !strings.Contains(out.String(), "runs/wait sequential p50") {
		t.Errorf("table:\n%s", out.String())
	}
}
