package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// serve serves a one-route app whose runs use model and returns a client
// of it.
func serve(t *testing.T, model *dawntest.ScriptedModel) *client.Client {
	t.Helper()
	dir := t.TempDir()
	route := filepath.Join(dir, "support", "[tenant]")
	if err := os.MkdirAll(route, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"agent.md": "You help customers.",
		"plan.md":  "- [ ] Understand the request\n- [ ] Answer\n",
	} {
		if err := os.WriteFile(filepath.Join(route, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(apptest.New(t, dir, model, apptest.Options{}).Serve(t) + "/")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readAll(t *testing.T, s *client.Stream) []stream.Event {
	t.Helper()
	var out []stream.Event
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		out = append(out, e)
	}
}

func TestNewRefusesWhatIsNotAServerURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8000", "ftp://host", "http://"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) accepted it", u)
		}
	}
}

func TestThreadWaitAndState(t *testing.T) {
	ctx := t.Context()
	c := serve(t, dawntest.Script().Reply("Hello.").Repeat())
	th, err := c.CreateThread(ctx, "th-1", json.RawMessage(`{"who":"test"}`))
	if err != nil || th.ID != "th-1" || th.Status == "" {
		t.Fatalf("CreateThread = %+v, %v", th, err)
	}
	_, err = c.CreateThread(ctx, "th-1", nil)
	if !client.IsKind(err, "thread_exists") {
		t.Fatalf("creating th-1 again: %v, want thread_exists", err)
	}
	raw, err := c.Wait(ctx, "th-1", client.Run{Route: "/support/acme", Input: client.UserInput("hi")})
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil || values["messages"] == nil {
		t.Fatalf("Wait = %s, %v; want the state values", raw, err)
	}
	st, err := c.State(ctx, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	// The state's messages also carry LangChain's type and id: compare
	// Dawn's fields.
	type msg struct{ Role, Content string }
	var waited, saved []msg
	if err := json.Unmarshal(values["messages"], &waited); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(st.Values["messages"], &saved); err != nil {
		t.Fatal(err)
	}
	if st.ThreadID != "th-1" || !slices.Equal(saved, waited) || len(saved) == 0 || st.Checkpoint.Route == "" {
		t.Errorf("State = %s %+v %+v; want th-1 with the run's messages %+v", st.ThreadID, st.Checkpoint, saved, waited)
	}
}

// TestErrorsAreTyped: an error answer is an *APIError with status, kind,
// message and details.code.
func TestErrorsAreTyped(t *testing.T) {
	ctx := t.Context()
	c := serve(t, dawntest.Script().Reply("x").Repeat())
	_, err := c.Wait(ctx, "e1", client.Run{Route: "/nowhere", Input: client.UserInput("hi")})
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("Wait on a missing route: %v, want an *APIError", err)
	}
	if ae.Status != http.StatusNotFound || ae.Kind != "route_not_found" || ae.Code != "route_not_found" || ae.Message == "" {
		t.Errorf("APIError = %+v; want 404 route_not_found with a message and details.code", ae)
	}
	if _, err := c.State(ctx, "nobody"); !client.IsKind(err, "thread_not_found") {
		t.Errorf("State of a missing thread: %v, want thread_not_found", err)
	}
	if _, err := c.CreateThread(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, "t"); !client.IsKind(err, "no_run_in_flight") {
		t.Errorf("Cancel with nothing in flight: %v, want no_run_in_flight", err)
	}
	if _, err := c.Plan(ctx, "t"); !client.IsKind(err, "plan_not_found") {
		t.Errorf("Plan of a thread that never ran plan-first: %v, want plan_not_found", err)
	}
}

func TestErrorOfAnotherShapeKeepsStatusAndBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL)
	_, err := c.State(t.Context(), "x")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || ae.Kind != "http_error" || ae.Message != "the server answered 502 Bad Gateway: upstream down" {
		t.Fatalf("err = %#v", err)
	}
}

// TestRejoinPicksUpAfterTheLastEvent: a stream dropped midway is picked up
// with Last-Event-ID and gives exactly the events not yet read.
func TestRejoinPicksUpAfterTheLastEvent(t *testing.T) {
	ctx := t.Context()
	todos := []map[string]string{{"content": "Understand the request", "status": "completed"}, {"content": "Answer", "status": "in_progress"}}
	c := serve(t, dawntest.Script().CallTool("writeTodos", map[string]any{"todos": todos}).Reply("Done."))
	s, err := c.Stream(ctx, "r1", client.Run{Route: "/support/acme", Input: client.UserInput("hi")})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s.RunID == "" || s.LastEventID() != strconv.FormatInt(first.ID, 10) {
		t.Fatalf("RunID %q, LastEventID %q after event %d", s.RunID, s.LastEventID(), first.ID)
	}
	rest := readAll(t, s) // the whole run, to compare with
	s.Close()
	// Pretend the connection dropped after the first event.
	s2, err := c.Join(ctx, "r1", s.RunID, strconv.FormatInt(first.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	again := readAll(t, s2)
	if len(again) != len(rest) || len(again) == 0 || again[0].ID != rest[0].ID || again[len(again)-1].Type != stream.TypeDone {
		t.Fatalf("rejoined events %v (ids from %d), want %v", dawntest.Types(again), again[0].ID, dawntest.Types(rest))
	}
	s3, err := c.Rejoin(ctx, s2)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if _, err := s3.Next(); !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		t.Fatalf("rejoining after done: %v, want the stream to end", err)
	}
}
