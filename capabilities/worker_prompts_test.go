package capabilities

import (
	"context"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// standing is a capability whose prompt a worker keeps.
type standing struct{ fakeMarker }

func (standing) WorkerKeepsPrompts() bool { return true }

// TestWorkerKeepsStandingPrompts: a worker keeps the prompt fragments of a
// WorkerPrompter, in order, and drops every other capability's.
func TestWorkerKeepsStandingPrompts(t *testing.T) {
	text := func(s string) Prompt { return func(thread.State) string { return s } }
	rules := standing{fakeMarker{name: "rules", file: "rules.md", contrib: Contribution{Prompts: []Prompt{text("Rule one."), text("Rule two.")}}}}
	route := routeDir(t, "/r", map[string]string{"checklist.md": "", "rules.md": ""})
	p, err := Prepare(context.Background(), route, Input{Markers: []Marker{checklist(), rules}, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Prompts) != 3 {
		t.Fatalf("route prompts: %d, want 3", len(p.Prompts))
	}
	w := p.Worker()
	var got []string
	for _, render := range w.Prompts {
		got = append(got, render(thread.State{}))
	}
	if len(got) != 2 || got[0] != "Rule one." || got[1] != "Rule two." {
		t.Errorf("worker prompts %q, want the two rules", got)
	}
	if ww := w.Worker(); len(ww.Prompts) != 2 {
		t.Errorf("a worker of a worker has %d prompts, want 2", len(ww.Prompts))
	}
	// A Prepared built by hand, without owners, gives a worker no prompts.
	hand := &Prepared{Route: route, Prompts: []Prompt{text("x")}}
	if w := hand.Worker(); w.Prompts != nil {
		t.Errorf("a hand-built route's worker kept %d prompts", len(w.Prompts))
	}
}
