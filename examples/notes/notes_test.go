package notes_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/examples/notes"
	"github.com/dawn-go/dawn/markers"
)

// TestNotesCapability: the notes package alone, registered with
// dawn.WithCapability,
// gives a route with notes.md a tool, a state field, a prompt, a stream
// event and an HTTP route, through the runtime as it is.
func TestNotesCapability(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"support/agent.md": "You answer customers.",
		"support/notes.md": "Note the customer's name.",
		"other/agent.md":   "No notes here.",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := dawntest.Script().
		CallTool("addNote", map[string]string{"text": "Customer is ACME"}).
		Reply("Noted.").
		Reply("Hello.")

	// An app's main registers the capability with
	// dawn.Main(dawn.WithCapability(notes.Marker())), which runs the
	// built-in markers and then this one; a test passes the same list.
	if got, want := names(dawn.Capabilities(dawn.WithCapability(notes.Marker()))), names(append(markers.All(), notes.Marker())); got != want {
		t.Fatalf("dawn.Capabilities = %s, want %s", got, want)
	}
	registry := append(markers.All(), notes.Marker())

	h := dawntest.New(t, dir, model, dawntest.Options{Markers: registry})
	res := h.Run(t, "t1", "/support", "Hi, this is ACME.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := string(res.Values["notes"]); got != `["Customer is ACME"]` {
		t.Errorf("state field notes = %s", got)
	}
	if !strings.Contains(strings.Join(dawntest.Types(res.Events), ","), "note_added") {
		t.Errorf("events = %v, want note_added", dawntest.Types(res.Events))
	}
	if first := fmt.Sprint(model.Requests()[0]); !strings.Contains(first, "Notes: Note the customer's name.") {
		t.Errorf("the model's first request has no notes prompt: %s", first)
	}

	resp, err := http.Get(h.URL + "/threads/t1/notes")
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Notes []string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET /threads/t1/notes: %d, body not JSON: %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body.Notes) != 1 || body.Notes[0] != "Customer is ACME" {
		t.Errorf("GET /threads/t1/notes = %d %+v", resp.StatusCode, body)
	}

	if res := h.Run(t, "t2", "/other", "Hi."); res.Err != nil || res.Values["notes"] != nil {
		t.Fatalf("run on a route without notes.md: %v %s", res.Err, res.Values["notes"])
	}
	resp, err = http.Get(h.URL + "/threads/t2/notes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET notes of a route without notes.md = %d, want 404", resp.StatusCode)
	}
}

// names joins the names of ms in order.
func names(ms []capabilities.Marker) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name())
	}
	return strings.Join(out, ",")
}
