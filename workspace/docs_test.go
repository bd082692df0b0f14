package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
)

// fence matches a fenced block of docs/workspace.md: the line before it,
// its info string and its text.
var fence = regexp.MustCompile("(?m)^(.*)\n```(\\w*)\n((?s:.*?))```\n")

// TestDocsAgentFiles: every agent.md example of docs/workspace.md (a
// md block) prepares as a route with the workspace capability, and
// every other block is marked as not run.
func TestDocsAgentFiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "workspace.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := fence.FindAllStringSubmatch(string(data), -1)
	agents := 0
	for _, b := range blocks {
		before, info, text := b[1], b[2], b[3]
		if info != "md" {
			if !regexp.MustCompile(`^<!-- not run: .+ -->$`).MatchString(before) {
				t.Errorf("a %s block is neither an agent.md example nor marked <!-- not run: reason -->:\n%s", info, text)
			}
			continue
		}
		agents++
		dir := apptest.WriteApp(t, map[string]string{"r/agent.md": text})
		a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
		if err != nil {
			t.Fatalf("docs example does not load: %v\n%s", err, text)
		}
		p := a.Routes["/r"]
		found := false
		for _, c := range p.Capabilities {
			found = found || c.Name == "workspace"
		}
		if !found || p.Tool("editFile") == nil {
			t.Errorf("docs example has no workspace: %+v\n%s", p.Capabilities, text)
		}
	}
	if agents != 3 {
		t.Errorf("%d agent.md examples, want 3", agents)
	}
}
