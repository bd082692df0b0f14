package capabilities

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// keeper is a capability whose tool "lookupNotes" a worker keeps.
type keeper struct{ fakeMarker }

func (keeper) WorkerKeeps(tool string) bool { return tool == "lookupNotes" }

// TestWorkerDropsEveryCapabilityTool: a worker keeps the app's tools and
// drops the tools of every capability, not only planning's, unless the
// capability's WorkerFilter keeps them.
func TestWorkerDropsEveryCapabilityTool(t *testing.T) {
	notes := keeper{fakeMarker{name: "notes", file: "notes.md", contrib: Contribution{
		Tools: []Tool{namedTool("lookupNotes"), namedTool("writeNotes")},
	}}}
	route := routeDir(t, "/r", map[string]string{"checklist.md": "", "notes.md": ""})
	p, err := Prepare(context.Background(), route, Input{
		Markers:       []Marker{checklist(), notes},
		AppTools:      []AppTool{{Tool: namedTool("search")}},
		AppToolsKnown: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := p.Worker()
	if got, want := toolNames(w.Tools), []string{"search", "lookupNotes"}; !slices.Equal(got, want) {
		t.Errorf("worker tools = %v, want %v", got, want)
	}
	if w.Prompts != nil || w.Transformers != nil || w.Hooks != nil {
		t.Errorf("worker kept prompts, transformers or hooks: %+v", w)
	}
	if len(w.Fields) != len(p.Fields) || w.Route != p.Route {
		t.Errorf("worker fields = %v, route %v; want the route's", w.Fields, w.Route)
	}
	if got := toolNames(p.Tools); !slices.Equal(got, []string{"search", "writeChecklist", "lookupNotes", "writeNotes"}) {
		t.Errorf("Worker changed the route's tools: %v", got)
	}
}

// TestPreparedSignal runs the Signal hooks in order and reports whether any
// acted.
func TestPreparedSignal(t *testing.T) {
	paused := json.RawMessage(`"paused"`)
	m := fakeMarker{name: "lifecycle", file: "life.md", contrib: Contribution{
		Fields: []Field{{Name: "life", Type: "string", Reducer: Replace}},
		Hooks: &Hooks{Signal: func(s thread.State, sig string) Effect {
			if sig != "pause" {
				return Effect{Stop: true}
			}
			return Effect{Update: thread.State{"life": paused}, Events: []stream.Event{stream.New("paused", nil)}}
		}},
	}}
	p, err := Prepare(context.Background(), routeDir(t, "/r", map[string]string{"life.md": ""}), Input{Markers: []Marker{m}, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	next, events, ok := p.Signal(thread.State{}, "pause")
	if !ok || string(next["life"]) != `"paused"` || len(events) != 1 || events[0].Type != "paused" {
		t.Errorf("pause: state %v, events %v, ok %v", next, events, ok)
	}
	start := thread.State{"life": json.RawMessage(`"running"`)}
	next, events, ok = p.Signal(start, "resume")
	if ok || string(next["life"]) != `"running"` || events != nil {
		t.Errorf("unhandled resume: state %v, events %v, ok %v", next, events, ok)
	}
}
