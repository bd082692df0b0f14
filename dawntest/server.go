package dawntest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// Server is an app served over HTTP on a loopback port for one test, like an
// httptest.Server: every route runs on one model (usually a ScriptedModel),
// on a store of its own. Its methods call the run API as any client does.
type Server struct {
	// URL is the API's base URL, such as "http://127.0.0.1:41234".
	URL string

	close  func()
	client *client.Client
}

// Options configure New.
type Options struct {
	// Tools are the app's Go tools, as dawn.Tools returns them.
	Tools []capabilities.AppTool
	// StorePath is a SQLite file; empty uses an in-memory store.
	StorePath string
	// Models picks a model per spec ("openai:gpt-4o-mini"); nil gives every
	// route the model New got.
	Models func(spec string) (llms.Model, error)
	// Markers are the capability markers the app runs with, and the ones
	// the offline model learns capabilities' texts from; nil means the
	// built-in ones. dawn.Capabilities gives the list an app's main
	// registers with dawn.WithCapability.
	Markers []capabilities.Marker
}

// New loads the app in dir and serves it until Close or the end of the
// test. Problems loading the app fail the test.
func New(t testing.TB, dir string, model llms.Model, opts Options) *Server {
	t.Helper()
	h := apptest.New(t, dir, model, apptest.Options{Tools: opts.Tools, StorePath: opts.StorePath, Models: opts.Models, Markers: opts.Markers})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, close: srv.Close, client: &client.Client{BaseURL: srv.URL}}
}

// Close shuts the server down. It is safe to call more than once.
func (s *Server) Close() { s.close() }

// runTimeout bounds Run.
const runTimeout = time.Minute

// Result is a finished run as tests look at it.
type Result struct {
	// RunID is the run's id.
	RunID string
	// Events are the run's events, the done event last.
	Events []stream.Event
	// Values are the final state values ("messages", "todos", ...), for a
	// run that succeeded.
	Values map[string]json.RawMessage
	// Err says why the run failed or that it was cancelled; nil when it
	// succeeded.
	Err error
}

// ErrCancelled is the Result.Err of a cancelled run.
var ErrCancelled = errors.New("dawntest: the run was cancelled")

// Run runs route on threadID with one user message through
// POST /threads/{id}/runs/stream and reads the stream to the run's end (up
// to a minute). A request the server refuses fails the test.
func (s *Server) Run(t testing.TB, threadID, route, message string) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	st := s.stream(t, ctx, threadID, route, message)
	defer st.Close()
	res := &Result{RunID: st.RunID()}
	for {
		e, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("dawntest: reading the events of the run on %s: %v", route, err)
		}
		res.Events = append(res.Events, e)
	}
	done := res.Events[len(res.Events)-1]
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(done.Data, &d); err != nil {
		t.Fatalf("dawntest: the done event of the run on %s is not {\"output\":...}: %v: %s", route, err, done.Data)
	}
	var outcome struct {
		Error     *string `json:"error"`
		Cancelled bool    `json:"cancelled"`
	}
	_ = json.Unmarshal(d.Output, &outcome)
	switch {
	case outcome.Cancelled:
		res.Err = ErrCancelled
	case outcome.Error != nil:
		res.Err = errors.New(*outcome.Error)
	default:
		if err := json.Unmarshal(d.Output, &res.Values); err != nil {
			t.Fatalf("dawntest: the run on %s succeeded but its output is not a state object: %v: %s", route, err, d.Output)
		}
	}
	return res
}

// Stream starts route on threadID with one user message and returns its
// live events, until the test ends. A request the server refuses fails
// the test.
func (s *Server) Stream(t testing.TB, threadID, route, message string) *EventStream {
	t.Helper()
	return s.stream(t, t.Context(), threadID, route, message)
}

func (s *Server) stream(t testing.TB, ctx context.Context, threadID, route, message string) *EventStream {
	t.Helper()
	st, err := s.client.Stream(ctx, threadID, client.Run{Route: route, Input: client.UserInput(message)})
	if err != nil {
		t.Fatalf("dawntest: starting %s on thread %s: %v", route, threadID, err)
	}
	return &EventStream{s: st}
}

// State returns threadID's latest state values by name. A thread that
// does not exist fails the test.
func (s *Server) State(t testing.TB, threadID string) map[string]json.RawMessage {
	t.Helper()
	st, err := s.client.State(t.Context(), threadID)
	if err != nil {
		t.Fatalf("dawntest: reading the state of thread %s: %v", threadID, err)
	}
	return st.Values
}

// Cancel cancels the run in flight on threadID and waits for it to stop.
// It reports false when no run was in flight; other failures fail the test.
func (s *Server) Cancel(t testing.TB, threadID string) bool {
	t.Helper()
	err := s.client.Cancel(t.Context(), threadID)
	if client.IsKind(err, "no_run_in_flight") {
		return false
	}
	if err != nil {
		t.Fatalf("dawntest: cancelling the run on thread %s: %v", threadID, err)
	}
	return true
}

// EventStream is the live event stream of one run.
type EventStream struct{ s *client.Stream }

// RunID is the run's id.
func (e *EventStream) RunID() string { return e.s.RunID }

// Next returns the next event. After the done event it returns io.EOF; a
// stream cut off before it returns io.ErrUnexpectedEOF.
func (e *EventStream) Next() (stream.Event, error) { return e.s.Next() }

// Close ends the stream; the run goes on.
func (e *EventStream) Close() error { return e.s.Close() }

// Todos decodes the "todos" state value; a value that is not a todo list
// fails the test. A missing value gives an empty list.
func (r *Result) Todos(t testing.TB) []Todo {
	t.Helper()
	var todos []Todo
	raw, ok := r.Values["todos"]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, &todos); err != nil {
		t.Fatalf("dawntest: the todos state value is not a todo list: %v: %s", err, raw)
	}
	return todos
}
