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

// TestStatePromptsInOrderAndForWorkers: StatePrompts are kept apart from
// Prompts, in marker order, and a worker keeps those of a WorkerPrompter
// only, as it does Prompts.
func TestStatePromptsInOrderAndForWorkers(t *testing.T) {
	text := func(s string) Prompt { return func(thread.State) string { return s } }
	plan := checklist()
	plan.contrib.StatePrompts = []Prompt{text("Current checklist: empty.")}
	notes := standing{fakeMarker{name: "notes", file: "notes.md", contrib: Contribution{StatePrompts: []Prompt{text("Notes: none.")}}}}
	route := routeDir(t, "/r", map[string]string{"checklist.md": "", "notes.md": ""})
	p, err := Prepare(context.Background(), route, Input{Markers: []Marker{plan, notes}, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	render := func(ps []Prompt) (out []string) {
		for _, r := range ps {
			out = append(out, r(thread.State{}))
		}
		return out
	}
	if got := render(p.StatePrompts); len(got) != 2 || got[0] != "Current checklist: empty." || got[1] != "Notes: none." {
		t.Errorf("state prompts %q, want the checklist's then the notes'", got)
	}
	if got := render(p.Prompts); len(got) != 1 || got[0] != "## Checklist" {
		t.Errorf("prompts %q, want the checklist's system prompt part alone", got)
	}
	if got := render(p.Worker().StatePrompts); len(got) != 1 || got[0] != "Notes: none." {
		t.Errorf("worker state prompts %q, want the notes' alone", got)
	}
}
