package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestReturnsUsesItsSkill: the /returns route lists its refunds skill in
// the system prompt, with its memory.md, and the model reads the skill and
// its policy reference through readSkill and readSkillFile.
func TestReturnsUsesItsSkill(t *testing.T) {
	m := dawntest.Script().
		CallTool("readSkill", map[string]any{"name": "refunds"}).
		CallTool("readSkillFile", map[string]any{"name": "refunds", "path": "references/policy.md"}).
		Reply("Order 1042 was delivered 12 days ago, so it can be refunded.")
	h := dawntest.New(t, ".", m, dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	res := h.Run(t, "returns-1", "/returns", "I want my money back for order 1042.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	policy, err := os.ReadFile(filepath.Join("returns", "skills", "refunds", "references", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, e := range res.Events {
		if e.Type != stream.TypeToolResult {
			continue
		}
		var d struct {
			Output string `json:"output"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("tool_result %s: %v", e.Data, err)
		}
		outputs = append(outputs, d.Output)
	}
	if len(outputs) != 2 || !strings.HasPrefix(outputs[0], "# Refunds\n\n1. Ask for the order number") || outputs[1] != string(policy) {
		t.Fatalf("tool results %q", outputs)
	}
	var system string
	for _, p := range m.Requests()[0][0].Parts {
		if tc, ok := p.(llms.TextContent); ok {
			system += tc.Text
		}
	}
	for _, want := range []string{"You handle returns", "Refunds over 100 EUR need a manager's approval", "- refunds: How to decide a refund request."} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "Ask for the order number") {
		t.Errorf("the system prompt holds the skill's body:\n%s", system)
	}
}
