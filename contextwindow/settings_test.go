package contextwindow_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/contextwindow"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
)

// load loads an app of files and returns it, or the error.
func load(t *testing.T, files map[string]string) (*app.App, error) {
	t.Helper()
	return app.Load(context.Background(), apptest.WriteApp(t, files), app.Options{Markers: markers.All()})
}

// settingsOf is route's context settings, or false when it has none.
func settingsOf(t *testing.T, a *app.App, route string) (contextwindow.Settings, bool) {
	t.Helper()
	p := a.Routes[route]
	if p == nil {
		t.Fatalf("no route %s", route)
	}
	for _, c := range p.Capabilities {
		if c.Name == contextwindow.Name {
			return c.Details.(contextwindow.Settings), true
		}
	}
	return contextwindow.Settings{}, false
}

// TestSettings: dawn.yaml's context is every route's default, agent.md's
// keys replace it key by key, context: false switches it off for a route,
// and the parts a setting switches on bring their tools and hooks.
func TestSettings(t *testing.T) {
	a, err := load(t, map[string]string{
		"dawn.yaml":  "context:\n  max_input_tokens: 9000\n  summary_model: openai:gpt-4o-mini\n",
		"a/agent.md": "Inherits.",
		"b/agent.md": "---\ncontext: {keep_recent_turns: 3, compact_tool: true, tool_output_max_bytes: 0}\n---\nOverrides.",
		"c/agent.md": "---\ncontext: false\n---\nOff.",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := settingsOf(t, a, "/a")
	want := contextwindow.Settings{MaxInputTokens: 9000, KeepRecentTurns: 6, SummaryModel: "openai:gpt-4o-mini", ToolOutputMaxBytes: 8192}
	if !ok || got != want {
		t.Errorf("/a: %+v, want %+v", got, want)
	}
	if p := a.Routes["/a"]; p.Tool(contextwindow.ReadToolName) == nil || p.Tool(contextwindow.CompactToolName) != nil {
		t.Errorf("/a tools: %v", p.AppTools())
	}
	got, _ = settingsOf(t, a, "/b")
	want = contextwindow.Settings{MaxInputTokens: 9000, KeepRecentTurns: 3, SummaryModel: "openai:gpt-4o-mini", CompactTool: true}
	if got != want {
		t.Errorf("/b: %+v, want %+v", got, want)
	}
	if p := a.Routes["/b"]; p.Tool(contextwindow.ReadToolName) != nil || p.Tool(contextwindow.CompactToolName) == nil {
		t.Errorf("/b has the wrong tools")
	}
	if _, ok := settingsOf(t, a, "/c"); ok {
		t.Errorf("/c switched context off, but has it")
	}

	a, err = load(t, map[string]string{"a/agent.md": "No settings."})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := settingsOf(t, a, "/a"); ok {
		t.Errorf("a route without context settings has the capability")
	}
}

// TestSettingsErrors: a bad value is an error naming the file, the key
// and what to write.
func TestSettingsErrors(t *testing.T) {
	for _, tc := range []struct{ file, text, want string }{
		{"a/agent.md", "---\ncontext: {max_input_tokens: 10}\n---\nx", "context.max_input_tokens must be a whole number of at least 1000 (0 switches compaction off)"},
		{"a/agent.md", "---\ncontext: {keep_recent_turns: 0}\n---\nx", "context.keep_recent_turns must be at least 1"},
		{"a/agent.md", "---\ncontext: {tool_output_max_bytes: big}\n---\nx", "context.tool_output_max_bytes must be a whole number of at least 256"},
		{"a/agent.md", "---\ncontext: {budget: 3}\n---\nx", `context: unknown key "budget"`},
		{"a/agent.md", "---\ncontext: lots\n---\nx", "context must be true, false or a mapping"},
		{"dawn.yaml", "context: {compact_tool: maybe}\n", "context.compact_tool must be true or false"},
	} {
		files := map[string]string{"a/agent.md": "x", tc.file: tc.text}
		_, err := load(t, files)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.file)) {
			t.Errorf("%s %q: error %v, want %q naming the file", tc.file, tc.text, err, tc.want)
		}
	}
}

// fence matches a fenced block: the line before it, its info string and
// its text.
var fence = regexp.MustCompile("(?m)^(.*)\n```(\\w*)\n((?s:.*?))```\n")

// TestDocsContextExamples: the agent.md example of docs/context.md is the
// route the end-to-end compaction test runs, with its settings; the
// dawn.yaml example sets every route's default; the settings table names
// every setting.
func TestDocsContextExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "context.md"))
	if err != nil {
		t.Fatal(err)
	}
	e2e, err := os.ReadFile(filepath.Join("..", "e2e", "context_aimock_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var agents, configs int
	for _, b := range fence.FindAllStringSubmatch(string(data), -1) {
		info, text := b[2], b[3]
		switch info {
		case "md":
			agents++
			if !strings.Contains(string(e2e), strings.ReplaceAll(text, "\n", `\n`)) {
				t.Errorf("the agent.md example is not the one the end-to-end test runs:\n%s", text)
			}
			a, err := load(t, map[string]string{"r/agent.md": text})
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := settingsOf(t, a, "/r"); s.MaxInputTokens != 1500 || s.KeepRecentTurns != 2 {
				t.Errorf("the agent.md example's settings: %+v", s)
			}
		case "yaml":
			configs++
			a, err := load(t, map[string]string{"dawn.yaml": text, "r/agent.md": "x"})
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := settingsOf(t, a, "/r"); !ok || s != contextwindow.Defaults() {
				t.Errorf("the dawn.yaml example gives %+v, want the defaults", s)
			}
		}
	}
	if agents != 1 || configs != 1 {
		t.Errorf("docs/context.md has %d agent.md and %d dawn.yaml examples, want 1 and 1", agents, configs)
	}
	for _, key := range []string{"max_input_tokens", "keep_recent_turns", "summary_model", "tool_output_max_bytes", "compact_tool"} {
		if !strings.Contains(string(data), "| `"+key+"` |") {
			t.Errorf("the settings table of docs/context.md lacks %s", key)
		}
	}
}
