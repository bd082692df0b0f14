package dawntest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
)

// writeApp writes a one-route app with a plan and returns its folder.
func writeApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	route := filepath.Join(dir, "support", "[tenant]")
	if err := os.MkdirAll(route, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"agent.md": "---\ndescription: support\n---\nYou help customers.",
		"plan.md":  "- [ ] Understand the request\n- [ ] Answer\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(route, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestServerRunsARouteOverHTTP(t *testing.T) {
	todos := []map[string]string{{"content": "Understand the request", "status": "completed"}, {"content": "Answer", "status": "in_progress"}}
	model := dawntest.Script().CallTool("writeTodos", map[string]any{"todos": todos}).Reply("Done.")
	srv := dawntest.New(t, writeApp(t), model, dawntest.Options{})

	res := srv.Run(t, "t1", "/support/acme", "help")
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	if res.RunID == "" {
		t.Error("Result.RunID is empty; the stream names its run in Dawn-Run-Id")
	}
	if types := dawntest.Types(res.Events); len(types) == 0 || types[len(types)-1] != "done" {
		t.Fatalf("events %v do not end with done", types)
	}
	if got := res.Todos(t); len(got) != 2 || got[0].Status != "completed" || got[1].Status != "in_progress" {
		t.Errorf("todos = %+v, want the list the model wrote", got)
	}
	if n := len(dawntest.PlanUpdates(t, res.Events, "plan_update")); n != 1 {
		t.Errorf("%d plan_update events, want 1", n)
	}
	state := srv.State(t, "t1")
	if string(state["todos"]) != string(res.Values["todos"]) {
		t.Errorf("state todos %s differ from the run's %s", state["todos"], res.Values["todos"])
	}
	if srv.Cancel(t, "t1") {
		t.Error("Cancel reported a run in flight on a thread whose run ended")
	}
}

func TestServerStreamsAndCancels(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := dawntest.New(t, writeApp(t), dawntest.Script().Wait(release).Reply("never sent"), dawntest.Options{})
	st := srv.Stream(t, "t2", "/support/acme", "help")
	defer st.Close()
	if st.RunID() == "" {
		t.Fatal("the stream does not name its run")
	}
	if !srv.Cancel(t, "t2") {
		t.Fatal("Cancel found no run in flight")
	}
	var last string
	for {
		e, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		last = string(e.Data)
	}
	if last != `{"output":{"cancelled":true}}` {
		t.Errorf("last event data = %s, want the cancelled done", last)
	}
}

// TestServerCloseStopsServing: like httptest, Close takes the URL down.
func TestServerCloseStopsServing(t *testing.T) {
	srv := dawntest.New(t, writeApp(t), dawntest.Script().Reply("hi"), dawntest.Options{})
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz = %d", resp.StatusCode)
	}
	srv.Close()
	srv.Close() // twice is fine
	if resp, err := http.Get(srv.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Close")
	}
}

// pong is a capability that writes a model turn of its own, "ping", and
// scripts the offline model's answer to it (capabilities.OfflineScript).
type pong struct{}

func (pong) Name() string                 { return "pong" }
func (pong) Detect(string) (string, bool) { return "", false }
func (pong) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}
func (pong) OfflineReply(text string) (string, bool) {
	return "pong from the capability", text == "ping"
}

// TestOfflineModelUsesOptionsMarkers: the offline model learns the
// capabilities of the app it serves from Options.Markers, not from a
// registry of its own.
func TestOfflineModelUsesOptionsMarkers(t *testing.T) {
	srv := dawntest.New(t, writeApp(t), models.NewOffline(), dawntest.Options{Markers: append(markers.All(), pong{})})
	res := srv.Run(t, "t1", "/support/acme", "ping")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal(res.Values["messages"], &msgs); err != nil || len(msgs) == 0 {
		t.Fatalf("messages = %s: %v", res.Values["messages"], err)
	}
	if last := msgs[len(msgs)-1]; last.Content != "pong from the capability" {
		t.Errorf("the offline model answered %q, want the reply the capability scripts", last.Content)
	}
}
