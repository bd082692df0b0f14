// Package apptest runs an app's routes in-process for this module's own
// tests: the loaded app, its store, the run manager and the HTTP API, all
// exposed. App authors use dawntest, which serves the same stack over HTTP
// and shows only its URL and a client.
package apptest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	_ "github.com/dawn-go/dawn/internal/server/wires" // Dawn's other wires: LangGraph, AG-UI, OpenAI, MCP, A2A
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// Harness runs an app's routes in-process on a store of its own, with every
// route using one model (usually a ScriptedModel).
type Harness struct {
	App   *app.App
	Store store.Store
	Runs  *runner.Manager
	// API is the HTTP API for the same runs, for Serve.
	API *server.Server
}

// Options configure New.
type Options struct {
	// Tools are the app's Go tools.
	Tools []capabilities.AppTool
	// StorePath is a SQLite file; empty uses an in-memory store.
	StorePath string
	// Models picks a model per spec; nil gives every route Model.
	Models runner.ModelFactory
	// Markers replaces the registered capability markers (markers.All()),
	// to try a capability before it is registered.
	Markers []capabilities.Marker
	// Telemetry records the runs' spans and metrics; nil records nothing.
	Telemetry *telemetry.Telemetry
	// MaxRuns caps the runs in flight (runner.Options.MaxRuns); 0: no cap.
	MaxRuns int
	// Webhooks sends the POSTs run requests ask for; nil refuses them.
	Webhooks runner.Webhooks
	// Auth authenticates the API's requests (server.Options.Auth); nil
	// serves without authentication.
	Auth *auth.Authenticator
	// Env is the API's environment (server.Options.Env), and the one the
	// Store's embedding model (store.index) is configured from; nil has
	// none.
	Env func(string) string
}

// New loads the app in dir and returns a harness whose routes all run on
// model. Problems loading the app fail the test.
func New(t testing.TB, dir string, model llms.Model, opts Options) *Harness {
	t.Helper()
	ms := opts.Markers
	if ms == nil {
		ms = markers.All()
	}
	a, err := app.Load(context.Background(), dir, app.Options{Tools: opts.Tools, ToolsKnown: true, Markers: ms})
	if err != nil {
		t.Fatalf("apptest: loading app %s: %v", dir, err)
	}
	path := opts.StorePath
	if path == "" {
		path = ":memory:"
	}
	var observe func(context.Context, models.EmbedCall)
	if a.Config.StoreIndex != nil {
		observe = opts.Telemetry.Embeddings(a.Config.StoreIndex.Embed)
	}
	index, err := a.OpenIndex(opts.Env, observe)
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	st, err := store.OpenWith(path, store.Options{Index: index})
	if err != nil {
		t.Fatalf("apptest: opening store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	factory := opts.Models
	if factory == nil {
		factory = func(string) (llms.Model, error) { return model, nil }
	}
	runs := runner.New(st, a, runner.Options{Models: factory, Env: func(string) string { return "" }, Telemetry: opts.Telemetry, MaxRuns: opts.MaxRuns, Webhooks: opts.Webhooks})
	return &Harness{App: a, Store: st, Runs: runs, API: server.New(runs, server.Options{Auth: opts.Auth, Env: opts.Env})}
}

// Result is a finished run as tests look at it.
type Result struct {
	Run    *runner.Run
	Events []stream.Event
	// Values are the final state values ("messages", "todos", ...).
	Values map[string]json.RawMessage
	Err    error
}

// Run runs route on threadID with one user message and waits (up to a
// minute) for it to finish.
func (h *Harness) Run(t testing.TB, threadID, route, message string) *Result {
	t.Helper()
	run, err := h.Runs.Start(context.Background(), runner.Request{
		ThreadID: threadID, Route: route,
		Messages: []thread.Message{{Role: thread.RoleUser, Content: message}},
	})
	if err != nil {
		t.Fatalf("apptest: starting %s: %v", route, err)
	}
	select {
	case <-run.Done():
	case <-time.After(time.Minute):
		t.Fatalf("apptest: run on %s did not finish within a minute", route)
	}
	res := &Result{Run: run, Events: run.Log.Since(0), Err: run.Err()}
	if res.Err == nil {
		if err := json.Unmarshal(run.Output(), &res.Values); err != nil {
			t.Fatalf("apptest: run on %s succeeded but its output is not a state object: %v: %s", route, err, run.Output())
		}
	}
	return res
}

// Serve starts the HTTP API on a loopback port for the test and returns its
// base URL.
func (h *Harness) Serve(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Todo is one plan item as state carries it.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

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
		t.Fatalf("apptest: the todos state value is not a todo list: %v: %s", err, raw)
	}
	return todos
}

// PostJSON posts body as JSON to url.
func PostJSON(t testing.TB, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// ReadSSE reads a server-sent event response to its end; a response that is
// not an event stream fails t with its status and body.
func ReadSSE(t testing.TB, resp *http.Response) []stream.Event {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("content type %q, status %d, body %s", ct, resp.StatusCode, data)
	}
	r := stream.NewReader(bufio.NewReader(resp.Body))
	var events []stream.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return events
		}
		if err != nil {
			t.Fatalf("reading SSE: %v", err)
		}
		events = append(events, e)
	}
}
