package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
)

// TestDocsMockFixture runs the aimock fixture of the models page, as the
// page says: aimock serves it, openai-compatible: points at it, and the
// dawn new app's route (with its countWords tool) calls the tool and
// answers as the fixture scripts.
func TestDocsMockFixture(t *testing.T) {
	fixture := docsBlock(t, "docs:aimock-fixture")
	path := filepath.Join(t.TempDir(), "fixtures.json")
	if err := os.WriteFile(path, []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	mock := startAimock(t, path)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"assistant/agent.md": "---\nmodel: openai-compatible:mock\n---\nYou help people with text.\n",
		"assistant/plan.md":  "- [ ] Read the request\n- [ ] Write the answer\n",
	})
	count := func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (map[string]int, error) {
		return map[string]int{"words": len(strings.Fields(in.Text))}, nil
	}
	env := map[string]string{models.EnvCompatibleBaseURL: mock + "/v1"}
	h := dawntest.New(t, dir, nil, dawntest.Options{
		Tools: dawn.Tools(dawn.Tool("countWords", "Count the words of a text.", count)),
		Models: func(spec string) (llms.Model, error) {
			return models.New(spec, func(k string) string { return env[k] })
		},
	})
	res := h.Run(t, "docs", "/assistant", "Count the words of: hello brave new world")
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	var result string
	for _, e := range res.Events {
		if e.Type == "tool_result" {
			result = string(e.Data)
		}
	}
	if !strings.Contains(result, `"name":"countWords","output":{"words":4}`) {
		t.Errorf("tool result = %s, want countWords counting 4 words", result)
	}
	var messages []struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(res.Values["messages"], &messages); err != nil || len(messages) == 0 {
		t.Fatalf("messages %s: %v", res.Values["messages"], err)
	}
	if last := messages[len(messages)-1].Content; last != "That text has 4 words." {
		t.Errorf("answer = %q, want the fixture's", last)
	}
}

// docsBlock returns the code block of the README or docs/ marked with
// marker.
func docsBlock(t *testing.T, marker string) string {
	t.Helper()
	blocks, err := docstext.Blocks(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.Marker == marker {
			return b.Text
		}
	}
	t.Fatalf("no block of the docs is marked <!-- %s -->", marker)
	return ""
}
