package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/router"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"modle: x\n", `field modle not found`},
		{"limits:\n  todos: -1\n", "limits.todos is -1; a limit must be positive"},
		{"model: gpt4\n", `model: `},
		{"temperature: hot\n", `temperature must be a number from 0 to 2, e.g. temperature: 0.2, got "hot"`},
		{"temperature: 2.5\n", `temperature must be a number from 0 to 2`},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": tc.yaml, "a/agent.md": "A"})
		_, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dawn.yaml") {
			t.Errorf("%q: err = %v, want %q naming dawn.yaml", tc.yaml, err, tc.want)
		}
	}
}

// TestTemperatureSetting: dawn.yaml's temperature is read as a number;
// absent or null leaves it unset.
func TestTemperatureSetting(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string
	}{
		{"temperature: 0.2\n", "0.2"},
		{"temperature: 0\n", "0"},
		{"temperature: null\n", "unset"},
		{"model: offline\n", "unset"},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": tc.yaml, "a/agent.md": "A"})
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		got := "unset"
		if a.Config.Temperature != nil {
			got = strconv.FormatFloat(*a.Config.Temperature, 'g', -1, 64)
		}
		if got != tc.want {
			t.Errorf("%q: temperature %s, want %s", tc.yaml, got, tc.want)
		}
	}
}

func TestLimitsReachWriteTodos(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "limits:\n  todos: 2\n  todo_bytes: 10\n", "a/agent.md": "A", "a/plan.md": "- [ ] x\n"})
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	tool := a.Routes["/a"].Tool("writeTodos")
	cases := []struct{ input, want string }{
		{`{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"content":"c","status":"pending"}]}`, "todos has 3 items, over the limit of 2"},
		{`{"todos":[{"content":"eleven byte","status":"pending"}]}`, "todos[0].content is 11 bytes, over the limit of 10 bytes"},
	}
	for _, tc := range cases {
		_, err := tool.Call(context.Background(), capabilities.Invocation{Input: []byte(tc.input)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

func TestStorePathAndModelChain(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/agent.md": "A", "b/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nB"})
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.StorePath(); got != filepath.Join(a.Dir, ".dawn", "dawn.db") {
		t.Errorf("store path = %s", got)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := a.ModelFor(a.Tree.Route("/a"), getenv); got != "offline" {
		t.Errorf("default model = %s", got)
	}
	env["DAWN_MODEL"] = "ollama:llama3.1"
	if got := a.ModelFor(a.Tree.Route("/a"), getenv); got != "ollama:llama3.1" {
		t.Errorf("DAWN_MODEL = %s", got)
	}
	if got := a.ModelFor(a.Tree.Route("/b"), getenv); got != "openai:gpt-4o-mini" {
		t.Errorf("front matter model = %s", got)
	}
}

// TestCapabilityRegisteredTwice: two markers with one name stop the load
// with an error that names the capability.
func TestCapabilityRegisteredTwice(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/agent.md": "Be brief."})
	ms := append(markers.All(), planning.Marker())
	_, err := app.Load(context.Background(), dir, app.Options{Markers: ms})
	if err == nil || !strings.Contains(err.Error(), `capability "planning" is registered twice`) {
		t.Fatalf("err = %v", err)
	}
}

// keysMarker is a capability that stores message metadata under keys.
type keysMarker struct {
	name string
	keys []string
}

func (m keysMarker) Name() string               { return m.name }
func (keysMarker) Detect(string) (string, bool) { return "", false }
func (m keysMarker) MessageKeys() []string      { return m.keys }
func (keysMarker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}

// TestMessageKeysDistinct: a capability's message metadata key that is one
// of a message's own fields (or LangGraph's message id), or that another
// capability already stores, stops the load with an error naming both,
// rather than being dropped from the message where the two meet.
func TestMessageKeysDistinct(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/agent.md": "Be brief."})
	for _, tc := range []struct {
		extra []capabilities.Marker
		want  string
	}{
		{[]capabilities.Marker{keysMarker{"tags", []string{"id"}}}, `capability "tags" stores message metadata under "id", a key messages already use`},
		{[]capabilities.Marker{keysMarker{"tags", []string{"content"}}}, `capability "tags" stores message metadata under "content", a key messages already use`},
		{[]capabilities.Marker{keysMarker{"notes", []string{"harness"}}}, `capabilities "harness" and "notes" both store message metadata under "harness"`},
	} {
		_, err := app.Load(context.Background(), dir, app.Options{Markers: append(markers.All(), tc.extra...)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %s", err, tc.want)
		}
	}
	if _, err := app.Load(context.Background(), dir, app.Options{Markers: append(markers.All(), keysMarker{"tags", []string{"tags"}})}); err != nil {
		t.Errorf("a key of its own: %v", err)
	}
}

// TestToolOfABrokenRoute: a Go tool scoped to a route whose agent.md has a
// typo in its front matter is not reported as registered for "no such
// route": the route's own problem is the one to fix, and it is reported.
func TestToolOfABrokenRoute(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"ops/agent.md": "---\ntoolz: [deploy]\n---\nYou deploy.\n"})
	tool := capabilities.AppTool{Route: "/ops", Tool: capabilities.Func("deploy", "Deploy.", func(context.Context, struct{}) (string, error) { return "ok", nil })}
	_, err := app.Load(context.Background(), dir, app.Options{Tools: []capabilities.AppTool{tool}, ToolsKnown: true, Markers: markers.All()})
	if err == nil || !strings.Contains(err.Error(), "toolz") {
		t.Fatalf("err = %v, want the agent.md typo reported", err)
	}
	if strings.Contains(err.Error(), "no such route") {
		t.Errorf("err = %v: the broken route's tool is reported as registered for no such route", err)
	}
}
