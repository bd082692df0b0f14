package dawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
)

type noteIn struct {
	Key  string `json:"key,omitempty"`
	Text string `json:"text"`
}

// saveNote and findNote are app tools that keep notes in the app's
// key-value store, under a namespace of the route's tenant.
func saveNote(ctx context.Context, in noteIn) (string, error) {
	st := dawn.Store(ctx)
	if st == nil {
		return "", errors.New("no store")
	}
	value, _ := json.Marshal(map[string]string{"text": in.Text})
	return "saved", st.Put(ctx, []string{"notes", dawn.Param(ctx, "tenant")}, in.Key, value)
}

func findNote(ctx context.Context, in noteIn) (string, error) {
	found, err := dawn.Store(ctx).Search(ctx, []string{"notes", dawn.Param(ctx, "tenant")}, capabilities.ItemSearch{Query: in.Text})
	if err != nil || len(found) == 0 {
		return "nothing found", err
	}
	var v struct{ Text string }
	_ = json.Unmarshal(found[0].Value, &v)
	return v.Text, nil
}

// TestStoreReachesTools: a tool's note kept with dawn.Store in one thread
// is found by another tool in a second thread, and by a client through the
// LangGraph Store API.
func TestStoreReachesTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "notes", "[tenant]"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes", "[tenant]", "agent.md"), []byte("---\ntools: [saveNote, findNote]\n---\nKeep notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := dawntest.Script().
		CallTool("saveNote", map[string]string{"key": "wifi", "text": "The office wifi password is hunter2"}).
		Reply("Saved.").
		CallTool("findNote", map[string]string{"text": "wifi password"}).
		Reply("Found it.")
	srv := dawntest.New(t, dir, model, dawntest.Options{Tools: dawn.Tools(
		dawn.Tool("saveNote", "Save a note.", saveNote),
		dawn.Tool("findNote", "Find a note.", findNote),
	)})
	if r := srv.Run(t, "thread-1", "/notes/acme", "Remember the wifi password"); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := srv.Run(t, "thread-2", "/notes/acme", "What is the wifi password?")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var output string
	for _, e := range r.Events {
		if e.Type == "tool_result" {
			output = string(e.Data)
		}
	}
	if !strings.Contains(output, "hunter2") {
		t.Fatalf("findNote in thread 2 did not find the note of thread 1: %s", output)
	}

	res, err := http.Get(srv.URL + "/store/items?namespace=notes.acme&key=wifi")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"value":{"text":"The office wifi password is hunter2"}`) {
		t.Fatalf("GET /store/items = %d %s", res.StatusCode, body)
	}
}
