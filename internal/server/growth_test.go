package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// noteTool appends its input's note to the route's notes field.
type noteTool struct{}

func (noteTool) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{Name: "addNote", Description: "Adds a note.", Schema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`)}
}

func (noteTool) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in struct{ Note string }
	if err := json.Unmarshal(inv.Input, &in); err != nil {
		return capabilities.Result{}, err
	}
	add, _ := json.Marshal([]map[string]string{{"note": in.Note}})
	return capabilities.Result{Output: json.RawMessage(`"noted"`), Update: map[string]json.RawMessage{"notes": add}}, nil
}

// TestGrowingAppendFieldReadsBack: a run adds one note per step to an
// append-reducer field until it is kilobytes long (the store keeps it in
// parts). The streamed done output, GET /threads/:id/state and the state
// after a restart all hold every note, in order.
func TestGrowingAppendFieldReadsBack(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"notes/agent.md":   "---\nmax_turns: 40\n---\nYou take notes.",
		"notes/state.yaml": "notes:\n  type: array\n",
	})
	const steps = 30
	model := dawntest.Script()
	var want []map[string]string
	for i := range steps {
		note := fmt.Sprintf("note %d: %s", i, strings.Repeat("é<&>", 40))
		model.CallTool("addNote", map[string]string{"note": note})
		want = append(want, map[string]string{"note": note})
	}
	model.Reply("Noted everything.")
	db := filepath.Join(t.TempDir(), "dawn.db")
	h := apptest.New(t, dir, model, apptest.Options{StorePath: db, Tools: []capabilities.AppTool{{Tool: noteTool{}}}})
	url := h.Serve(t)
	events := readSSE(t, post(t, url+"/threads/n/runs/stream", runBody("/notes", "take notes")))
	done := events[len(events)-1]
	var out struct {
		Output struct {
			Notes json.RawMessage `json:"notes"`
		} `json:"output"`
	}
	if err := json.Unmarshal(done.Data, &out); err != nil || done.Type != stream.TypeDone {
		t.Fatalf("last event %s %s", done.Type, done.Data)
	}
	wantJSON, _ := json.Marshal(want)
	if !jsonEqual(out.Output.Notes, wantJSON) {
		t.Fatalf("done output notes = %.300s…", out.Output.Notes)
	}
	check := func(url, when string) {
		t.Helper()
		var st struct {
			Values struct {
				Notes json.RawMessage `json:"notes"`
			} `json:"values"`
		}
		if code := getJSON(t, url+"/threads/n/state", &st); code != http.StatusOK {
			t.Fatalf("%s: state status %d", when, code)
		}
		if string(st.Values.Notes) != string(out.Output.Notes) {
			t.Fatalf("%s: state notes differ from the done output:\n%.300s…\n%.300s…", when, st.Values.Notes, out.Output.Notes)
		}
	}
	check(url, "after the run")
	h.Store.Close()
	h2 := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db, Tools: []capabilities.AppTool{{Tool: noteTool{}}}})
	check(h2.Serve(t), "after a restart")
}
