package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

type nopSteps struct{}

func (nopSteps) RunStep(context.Context, string, capabilities.StepTarget, string) (string, error) {
	return "", nil
}
func (nopSteps) Emit(stream.Event) {}
func (nopSteps) Signal() string    { return "" }

// TestStepsLentToRouteToolsOnly: Host.Steps reaches the route's own
// tools as Invocation.Steps and not a subagent's tools, whose steps would
// run on the parent's route.
func TestStepsLentToRouteToolsOnly(t *testing.T) {
	var mu sync.Mutex
	lent := map[string]bool{}
	probe := capabilities.Func("probe", "records whether it may run steps", func(ctx context.Context, in echoIn) (string, error) {
		inv, _ := capabilities.InvocationFrom(ctx)
		mu.Lock()
		lent[in.Text] = inv.Steps != nil
		mu.Unlock()
		return "ok", nil
	})
	p := prepare(t, map[string]string{"r/agent.md": "P", "r/subagents/helper/agent.md": "H"}, capabilities.AppTool{Tool: probe})
	helper := dawntest.Script().CallTool("probe", echoIn{Text: "subagent"}).Reply("helped")
	parent := dawntest.Script().CallTool("probe", echoIn{Text: "route"}).CallTool("task", map[string]any{"subagent": "helper", "input": "x"}).Reply("done")
	_, _, err := run(t, p, parent, func(c *agent.Config, h *testHost) {
		h.steps = nopSteps{}
		h.subagent = func(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error) {
			return prepare(t, map[string]string{"r/agent.md": "H"}, capabilities.AppTool{Tool: probe}), helper, "script", nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !lent["route"] || lent["subagent"] || len(lent) != 2 {
		t.Fatalf("steps lent: %v; want the route's tool only", lent)
	}
}
