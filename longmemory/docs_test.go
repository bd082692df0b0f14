package longmemory_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/longmemory"
	"github.com/dawn-go/dawn/markers"
)

// fence matches a fenced block of a doc: the line before it, its info
// string and its text.
var fence = regexp.MustCompile("(?m)^(.*)\n```(\\w*)\n((?s:.*?))```\n")

// TestDocsMemoryExamples: every agent.md example of docs/memory.md (an md
// block with front matter) prepares as a route with long-term memory, the
// one with approve_replace holds replacements, and the interrupt shown
// has the detail fields a memory interrupt has.
func TestDocsMemoryExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	agents, guarded, interrupts, candidates := 0, 0, 0, 0
	for _, b := range fence.FindAllStringSubmatch(string(data), -1) {
		info, text := b[2], b[3]
		switch {
		case info == "md" && strings.HasPrefix(text, "---\n"):
			agents++
			g, writes := approveReplace(t, text)
			if g {
				guarded++
			}
			if writes == longmemory.WritesCandidate {
				candidates++
			}
		case info == "json" && strings.Contains(text, `"kind":"memory"`):
			interrupts++
			checkInterruptDoc(t, text)
		}
	}
	if agents != 3 || guarded != 1 || candidates != 1 || interrupts != 1 {
		t.Errorf("docs/memory.md: %d agent.md examples (%d with approve_replace, %d with writes: candidate), %d memory interrupts; want 3 (1, 1), 1", agents, guarded, candidates, interrupts)
	}
}

// approveReplace loads agent as a route and reports whether its memory
// holds replacements, and its writes setting.
func approveReplace(t *testing.T, agent string) (bool, string) {
	t.Helper()
	dir := apptest.WriteApp(t, map[string]string{"r/agent.md": agent})
	a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
	if err != nil {
		t.Fatalf("docs example does not load: %v\n%s", err, agent)
	}
	p := a.Routes["/r"]
	if p == nil {
		t.Fatalf("docs example is not a route:\n%s", agent)
	}
	for _, c := range p.Capabilities {
		if c.Name == longmemory.Name {
			d, _ := c.Details.(map[string]any)
			writes, _ := d["writes"].(string)
			return d["approve_replace"] == true && p.Hooks != nil, writes
		}
	}
	t.Fatalf("docs example has no long-term memory: %+v\n%s", p.Capabilities, agent)
	return false, ""
}

// checkInterruptDoc checks that the doc's interrupt detail has exactly the
// fields of longmemory.Detail.
func checkInterruptDoc(t *testing.T, text string) {
	t.Helper()
	var in struct {
		Kind   string         `json:"kind"`
		Detail map[string]any `json:"detail"`
	}
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		t.Fatalf("the interrupt of docs/memory.md: %v", err)
	}
	raw, _ := json.Marshal(longmemory.Detail{})
	var want map[string]any
	_ = json.Unmarshal(raw, &want)
	var got, wantKeys []string
	for k := range in.Detail {
		got = append(got, k)
	}
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(got)
	slices.Sort(wantKeys)
	if in.Kind != longmemory.Kind || !slices.Equal(got, wantKeys) {
		t.Errorf("the interrupt of docs/memory.md has kind %q and detail fields %v; want %q and %v", in.Kind, got, longmemory.Kind, wantKeys)
	}
}

// TestBadApproveReplaceNamesFileAndKey: a wrong approve_replace fails the
// route with an error naming its agent.md and the key.
func TestBadApproveReplaceNamesFileAndKey(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"r/agent.md": "---\nmemory: {approve_replace: sometimes}\n---\nYou help."})
	_, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
	if err == nil || !strings.Contains(err.Error(), filepath.Join("r", "agent.md")) || !strings.Contains(err.Error(), "memory.approve_replace must be true or false") {
		t.Fatalf("error: %v", err)
	}
}
