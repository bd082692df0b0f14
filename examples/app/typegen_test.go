package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/app"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/examples/app/dawngen"
	"github.com/dawn-go/dawn/models"
	"github.com/dawn-go/dawn/typegen"
)

const regenerate = "go run ./examples/app typegen --app examples/app"

// appTools are the tools main registers, as app.Load takes them.
func appTools() []capabilities.AppTool { return dawn.Tools(options()...) }

// TestTypegenOutputIsCurrent: the committed dawngen/ folder is exactly what
// typegen writes for the app today.
func TestTypegenOutputIsCurrent(t *testing.T) {
	a, err := app.Load(context.Background(), ".", app.Options{Tools: appTools(), ToolsKnown: true})
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
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools()})
	return &dawngen.Client{BaseURL: h.URL}
}

func TestGeneratedClientWait(t *testing.T) {
	c := serve(t)
	state, err := c.WaitSupportTenant(context.Background(), "wait-1", dawngen.SupportTenantParams{Tenant: "acme"}, dawngen.UserInput("My invoice looks wrong."))
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
	_, err := c.Wait(context.Background(), "err-1", "/no/such/route", dawngen.UserInput("hi"))
	var apiErr *dawngen.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want an *APIError", err)
	}
	if apiErr.Status != 404 || apiErr.Kind != "route_not_found" || apiErr.Message == "" {
		t.Errorf("APIError = %+v, want 404 route_not_found with a message", apiErr)
	}
}

func TestGeneratedClientStream(t *testing.T) {
	c := serve(t)
	s, err := c.StreamSupportTenant(context.Background(), "stream-1", dawngen.SupportTenantParams{Tenant: "acme"}, dawngen.UserInput("Can I add seats?"))
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
	if types[len(types)-1] != dawngen.EventDone {
		t.Errorf("last event = %s, want done", types[len(types)-1])
	}
}

func TestGeneratedClientSubagentPlanUpdate(t *testing.T) {
	c := serve(t)
	s, err := c.StreamResearch(context.Background(), "stream-2", dawngen.UserInput("How do tides work?"))
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
