// Package notes is the worked example of a capability: a route folder with
// a notes.md beside agent.md gets a tool (addNote), a state field (notes),
// a stream event (note_added) and an HTTP route (GET /threads/:id/notes).
// It is all in this one package, which could live in any module; an app
// registers it in its main with dawn.Main(dawn.WithCapability(notes.Marker())),
// and nothing in Dawn changes. See notes_test.go for it running.
package notes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Marker returns the notes capability.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return "notes" }

// Detect switches the capability on for a route folder with a notes.md.
func (marker) Detect(dir string) (string, bool) {
	_, err := os.Stat(filepath.Join(dir, "notes.md"))
	return "notes.md", err == nil
}

// Load reads notes.md, the guidance the model gets on what to note, and
// contributes the tool, the state field, a prompt and the event.
func (marker) Load(_ context.Context, _ *router.Route, file string) (*capabilities.Contribution, error) {
	guide, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return &capabilities.Contribution{
		Tools: []capabilities.Tool{addNote{}},
		Fields: []capabilities.Field{{
			Name: "notes", Type: "array", Default: json.RawMessage("[]"),
			Reducer: capabilities.Append, Source: file,
		}},
		Prompts: []capabilities.Prompt{func(thread.State) string {
			return "Notes: " + strings.TrimSpace(string(guide))
		}},
		Transformers: []capabilities.Transformer{func(ev capabilities.ToolEvent) []stream.Event {
			if ev.Name != "addNote" || ev.Err != nil {
				return nil
			}
			return []stream.Event{stream.New("note_added", json.RawMessage(ev.Input))}
		}},
	}, nil
}

// addNote appends a note to the thread's notes.
type addNote struct{}

func (addNote) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{
		Name: "addNote", Description: "Keep a short note on the thread.",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}
}

func (addNote) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(inv.Input, &in); err != nil || strings.TrimSpace(in.Text) == "" {
		return capabilities.Result{}, errors.New(`addNote needs {"text": "..."}`)
	}
	note, _ := json.Marshal([]string{in.Text})
	return capabilities.Result{Output: json.RawMessage(`"noted"`), Update: thread.State{"notes": note}}, nil
}

// ThreadRoutes serves GET /threads/:id/notes (capabilities.HTTPRoutes).
func (marker) ThreadRoutes(host capabilities.ThreadHost) []capabilities.ThreadRoute {
	return []capabilities.ThreadRoute{{Method: http.MethodGet, Path: "notes", Handler: func(w http.ResponseWriter, r *http.Request) error {
		view, err := host.Thread(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		if view.Route == nil || !hasNotes(view.Route) {
			return &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "notes_not_found", Msg: "this thread's route has no notes.md"}
		}
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]json.RawMessage{"notes": view.Values["notes"]})
	}}}
}

// hasNotes reports whether the notes capability is on for p.
func hasNotes(p *capabilities.Prepared) bool {
	f, ok := p.Field("notes")
	return ok && f.Capability == "notes"
}
