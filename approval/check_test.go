package approval_test

import (
	"context"
	"github.com/dawn-go/dawn/markers"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
)

// TestCheckWarnsAboutApproveEntries: `dawn check` warns about an approve:
// entry naming no tool of the route, one dawn.yaml denies, and one the
// route's tools: list leaves out; a good entry gets no warning.
func TestCheckWarnsAboutApproveEntries(t *testing.T) {
	d := &deploys{}
	dir := writeApp(t, map[string]string{
		"ops/agent.md":    "---\napprove: [deployProd, deplyProd, dropTable]\n---\nYou deploy.",
		"narrow/agent.md": "---\ntools: [dropTable]\napprove: [deployProd]\n---\nNarrow.",
		"dawn.yaml":       "permissions:\n  deny: {tool: [dropTable]}\n",
	})
	drop := capabilities.AppTool{Tool: capabilities.Func("dropTable", "Drop a table.", func(context.Context, struct{}) (string, error) { return "", nil })}
	a, err := app.Load(context.Background(), dir, app.Options{Tools: []capabilities.AppTool{d.tool(), drop}, ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(a.Warnings, "\n")
	for _, want := range []string{
		`route /ops: [approval] ` + "", `"deplyProd" under approve:, but the route has no such tool`,
		`"dropTable" under approve:, but dawn.yaml's permissions.deny.tool denies it`,
		`route /narrow: [approval]`, `"deployProd" under approve:, but its tools: list does not have it`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q; got:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"deployProd" under approve:, but the route has no such tool`) {
		t.Errorf("a registered tool was reported missing:\n%s", all)
	}
}
