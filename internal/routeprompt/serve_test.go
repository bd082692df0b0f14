package routeprompt_test

import (
	"context"
	"github.com/dawn-go/dawn/markers"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/tmc/langchaingo/llms"
)

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

// TestRouteParamsAndStateReachThePrompt: over HTTP, the model's system
// prompt is the agent.md body rendered with the request's route params and
// the thread's state.
func TestRouteParamsAndStateReachThePrompt(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"support/[tenant]/agent.md":   "---\nmodel: offline\n---\nYou help customers of {{ .Params.tenant }}.\nPriority: {{ .State.priority }}.\n",
		"support/[tenant]/state.yaml": "priority:\n  type: string\n  default: normal\n",
	})
	model := dawntest.Script().Reply("ok")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	srv.Run(t, "t1", "/support/acme", "hello")
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model got %d requests, want 1", len(reqs))
	}
	first := reqs[0][0]
	if first.Role != llms.ChatMessageTypeSystem {
		t.Fatalf("first message is %s, want the system prompt", first.Role)
	}
	text := first.Parts[0].(llms.TextContent).Text
	if !strings.HasPrefix(text, "You help customers of acme.\nPriority: normal.") {
		t.Errorf("system prompt = %q, want the rendered template", text)
	}
}

// TestLoadReportsPromptTemplateProblems: app.Load (and so dawn check)
// reports an unknown name with the file and line.
func TestLoadReportsPromptTemplateProblems(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"support/[tenant]/agent.md": "---\nmodel: offline\n---\nYou help {{ .Params.customer }}.\n",
	})
	_, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	want := filepath.Join(dir, "support", "[tenant]", "agent.md") + `:4: prompt template: route /support/[tenant] has no param "customer"; its params are tenant`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Load error = %v, want it to contain %q", err, want)
	}
}
