package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/examples/app/dawngen"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/typegen"
	"github.com/dawn-go/dawn/stream"
)

const regenerate = "go run ./examples/app typegen --app examples/app"

// appTools are the tools main registers, as app.Load takes them.
func appTools() []capabilities.AppTool { return dawn.Tools(options()...) }

// appMarkers are the capabilities main runs with: the built-in ones, with
// the plan verifiers main registers.
func appMarkers() []capabilities.Marker { return dawn.Capabilities(options()...) }

// TestTypegenOutputIsCurrent: the committed dawngen/ folder is exactly what
// typegen writes for the app today.
func TestTypegenOutputIsCurrent(t *testing.T) {
	a, err := app.Load(context.Background(), ".", app.Options{Tools: appTools(), ToolsKnown: true, Markers: appMarkers()})
	if err != nil {
		t.Fatal(err)
	}
	files, err := typegen.Generate(a, typegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join("dawngen", filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("dawngen/%s: %v; run `%s`", rel, err, regenerate)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("dawngen/%s is out of date; run `%s`", rel, regenerate)
		}
	}
	schemas, _ := filepath.Glob(filepath.Join("dawngen", typegen.SchemaDir, "*.json"))
	for _, p := range schemas {
		rel := filepath.ToSlash(strings.TrimPrefix(p, "dawngen"+string(filepath.Separator)))
		if _, ok := files[rel]; !ok {
			t.Errorf("dawngen/%s is left from a removed route; run `%s`", rel, regenerate)
		}
	}
}

func TestGeneratedParamsPath(t *testing.T) {
	tests := []struct {
		tenant string
		want   string
	}{
		{"acme", "/support/acme"},
		{"acme corp", "/support/acme%20corp"},
		{"a/b", "/support/a%2Fb"},
	}
	for _, tt := range tests {
		if got := (dawngen.SupportTenantParams{Tenant: tt.tenant}).Path(); got != tt.want {
			t.Errorf("SupportTenantParams{%q}.Path() = %q, want %q", tt.tenant, got, tt.want)
		}
	}
	if got := dawngen.Routes(); !slices.Contains(got, dawngen.RouteSupportTenant) || dawngen.RouteSupportTenant != "/support/[tenant]" {
		t.Errorf("Routes() = %v", got)
	}
}

// serve runs the example app on the offline model behind a loopback server
// and returns a generated client for it.
func serve(t *testing.T) *dawngen.Client {
	t.Helper()
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	c, err := dawngen.NewClient(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGeneratedClientWait(t *testing.T) {
	c := serve(t)
	state, err := c.WaitSupportTenant(context.Background(), "wait-1", dawngen.SupportTenantParams{Tenant: "acme"}, client.UserInput("My invoice looks wrong."))
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Todos) != 4 {
		t.Fatalf("todos = %+v, want the 4 items of plan.md", state.Todos)
	}
	for i, todo := range state.Todos {
		if todo.Status != dawngen.StatusCompleted {
			t.Errorf("todos[%d] = %+v, want completed", i, todo)
		}
	}
	if len(state.Messages) < 2 || state.Messages[0].Role != "user" {
		t.Errorf("messages = %+v, want the conversation starting with the user's message", state.Messages)
	}
}

func TestGeneratedClientAPIError(t *testing.T) {
	c := serve(t)
	_, err := c.Wait(context.Background(), "err-1", client.Run{Route: "/no/such/route", Input: client.UserInput("hi")})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want an *APIError", err)
	}
	if apiErr.Status != 404 || apiErr.Kind != "route_not_found" || apiErr.Code != "route_not_found" || apiErr.Message == "" {
		t.Errorf("APIError = %+v, want 404 route_not_found with a message and details.code", apiErr)
	}
	err = c.Cancel(context.Background(), "no-such-thread")
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Kind != "thread_not_found" {
		t.Errorf("Cancel on a missing thread = %v, want a 404 thread_not_found APIError", err)
	}
}

// TestGeneratedClientRejoin: a stream dropped midway is picked up with
// Last-Event-ID and gives exactly the events not yet read.
func TestGeneratedClientRejoin(t *testing.T) {
	c := serve(t)
	ctx := context.Background()
	s, err := c.StreamSupportTenant(ctx, "rejoin-1", dawngen.SupportTenantParams{Tenant: "acme"}, client.UserInput("Can I add seats?"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s.ThreadID != "rejoin-1" || s.LastEventID() != strconv.FormatInt(first.ID, 10) {
		t.Fatalf("ThreadID %q, LastEventID %q after event %d", s.ThreadID, s.LastEventID(), first.ID)
	}
	rest := readStream(t, s)
	s.Close()
	s2, err := c.Join(ctx, "rejoin-1", s.RunID, strconv.FormatInt(first.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	again := readStream(t, s2)
	if !slices.Equal(dawntest.Types(again), dawntest.Types(rest)) || again[0].ID != rest[0].ID {
		t.Fatalf("rejoined events %v, want %v", dawntest.Types(again), dawntest.Types(rest))
	}
}

// TestGeneratedClientCutStream: a stream that ends before its done event
// is not mistaken for a finished run.
func TestGeneratedClientCutStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 1\nevent: chunk\ndata: {\"content\":\"hi\"}\n\n")
	}))
	defer srv.Close()
	c, err := dawngen.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Stream(context.Background(), "cut-1", client.Run{Route: dawngen.RouteBlog, Input: client.UserInput("hi")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Next at the cut = %v, want io.ErrUnexpectedEOF", err)
	}
}

// readStream reads s to its done event.
func readStream(t *testing.T, s *dawngen.EventStream) []stream.Event {
	t.Helper()
	var out []stream.Event
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

func TestGeneratedClientStream(t *testing.T) {
	c := serve(t)
	s, err := c.StreamSupportTenant(context.Background(), "stream-1", dawngen.SupportTenantParams{Tenant: "acme"}, client.UserInput("Can I add seats?"))
	if err != nil {
		t.Fatal(err)
	}
	if s.RunID == "" {
		t.Error("RunID is empty")
	}
	var updates []dawngen.PlanUpdate
	var types []string
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		if u, ok := dawngen.DecodePlanUpdate(e); ok {
			updates = append(updates, u)
		}
	}
	s.Close()
	if len(updates) == 0 {
		t.Fatalf("no plan_update decoded; events: %v", types)
	}
	last := updates[len(updates)-1]
	if len(last.Todos) != 4 || last.Todos[3].Status != dawngen.StatusCompleted || last.Subagent != nil {
		t.Errorf("last plan update = %+v, want 4 todos, all done, from the route itself", last)
	}
	if types[len(types)-1] != client.EventDone {
		t.Errorf("last event = %s, want done", types[len(types)-1])
	}
}

func TestGeneratedClientSubagentPlanUpdate(t *testing.T) {
	c := serve(t)
	s, err := c.StreamResearch(context.Background(), "stream-2", client.UserInput("How do tides work?"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var fromSubagent []dawngen.PlanUpdate
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := dawngen.DecodePlanUpdate(e); ok && u.Subagent != nil {
			fromSubagent = append(fromSubagent, u)
		}
	}
	if len(fromSubagent) == 0 {
		t.Fatal("no subagent.plan_update decoded")
	}
	sub := fromSubagent[0].Subagent
	if sub.Name != "researcher" || sub.RouteID != dawngen.RouteResearchSubagentsResearcher || sub.Depth != 1 || sub.CallID == "" {
		t.Errorf("subagent = %+v", sub)
	}
}
