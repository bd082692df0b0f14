package approval_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
)

// toolNames lists a prepared route's tools.
func toolNames(p *capabilities.Prepared) []string {
	var out []string
	for _, t := range p.Tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

// TestToolPolicy: agent.md's tools: {allow, deny, approve} narrows the
// app's tools to allow, removes what deny names (a capability's tools
// too), and parks calls of what approve names; the list form still works.
func TestToolPolicy(t *testing.T) {
	d := &deploys{}
	lookup := capabilities.AppTool{Tool: capabilities.Func("lookup", "Look up.", func(context.Context, struct{}) (string, error) { return "1.4.1", nil })}
	dir := writeApp(t, map[string]string{
		"ops/agent.md":    "---\ntools: {allow: [deployProd, lookup], deny: [lookup, writeTodos], approve: [deployProd]}\n---\nYou deploy.",
		"ops/plan.md":     "- [ ] Deploy\n",
		"list/agent.md":   "---\ntools: [lookup]\n---\nYou look.",
		"denied/agent.md": "---\ntools: {deny: [deployProd]}\n---\nYou look.",
	})
	a, err := app.Load(context.Background(), dir, app.Options{Tools: []capabilities.AppTool{d.tool(), lookup}, ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	for route, want := range map[string][]string{"/ops": {"deployProd"}, "/list": {"lookup"}, "/denied": {"lookup"}} {
		if got := toolNames(a.Routes[route]); !slices.Equal(got, want) {
			t.Errorf("route %s has tools %q, want %q", route, got, want)
		}
	}
	url := apptest.New(t, dir, deployScript(), apptest.Options{Tools: []capabilities.AppTool{d.tool(), lookup}}).Serve(t)
	in := park(t, url, "t1", d)
	resume(t, url, "t1", resumeBody(in.ID, "resolved", `"once"`))
	if n := len(d.got()); n != 1 {
		t.Fatalf("deployProd ran %d times after once", n)
	}
}

// TestToolPolicyErrors: a tools.deny or tools.allow name that is no tool
// of the route fails the route, naming agent.md and the field, when the
// app's tools are known, and is a warning when they are not (the stock
// CLI inspecting an app whose tools live in Go).
func TestToolPolicyErrors(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"ops/agent.md": "---\ntools: {deny: [lokup]}\n---\nYou look.",
		"two/agent.md": "---\ntools: {allow: [serch]}\n---\nYou look.",
	})
	_, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err == nil || !strings.Contains(err.Error(), `ops/agent.md lists tool "lokup" in tools.deny, but the route has no such tool`) || !strings.Contains(err.Error(), `two/agent.md lists tool "serch" in tools:`) {
		t.Fatalf("load error: %v", err)
	}
	a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(a.Warnings, "\n"); !strings.Contains(all, `"lokup" in tools.deny`) {
		t.Fatalf("warnings: %s", all)
	}
}
