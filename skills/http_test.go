package skills_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestSkillsOverHTTP runs a route with skills through the HTTP API on a
// scripted model that reads a skill and then its reference: the tools'
// results reach the stream and the model, and the system prompt of every
// call lists the skills without their bodies, after the standing
// instructions.
func TestSkillsOverHTTP(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"AGENTS.md":                                   "Answer in British English.",
		"skills/tone/SKILL.md":                        skillMD("tone", "The house tone of voice.", "TONE BODY"),
		"support/agent.md":                            "You help customers.",
		"support/memory.md":                           "Refunds over 100 EUR need a manager.",
		"support/skills/refunds/SKILL.md":             skillMD("refunds", "How to handle a refund request.", "REFUNDS BODY: read references/policy.md."),
		"support/skills/refunds/references/policy.md": "Refunds within 30 days of delivery.",
	})
	m := dawntest.Script().
		CallTool("readSkill", map[string]any{"name": "refunds"}).
		CallTool("readSkillFile", map[string]any{"name": "refunds", "path": "references/policy.md"}).
		CallTool("readSkillFile", map[string]any{"name": "refunds", "path": "../../../AGENTS.md"}).
		Reply("You can have a refund within 30 days.")
	srv := dawntest.New(t, dir, m, dawntest.Options{})
	res := srv.Run(t, "t1", "/support", "Can I get a refund?")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	results := toolResults(t, res.Events)
	want := []string{
		`"REFUNDS BODY: read references/policy.md."`,
		`"Refunds within 30 days of delivery."`,
	}
	if len(results) != 3 || !slices.Equal(results[:2], want) {
		t.Fatalf("tool results %q, want %q then an error", results, want)
	}
	if !strings.HasPrefix(results[2], "error: ") || !strings.Contains(results[2], `leads outside the skill's folder`) {
		t.Errorf("readSkillFile of ../../../AGENTS.md: %s", results[2])
	}
	reqs := m.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	for i, req := range reqs {
		system := systemPrompt(req)
		for _, s := range []string{"You help customers.", "Answer in British English.", "Refunds over 100 EUR need a manager.", "- refunds: How to handle a refund request.", "- tone: The house tone of voice."} {
			if !strings.Contains(system, s) {
				t.Errorf("call %d: the system prompt lacks %q:\n%s", i+1, s, system)
			}
		}
		if strings.Contains(system, "BODY") || strings.Contains(system, "30 days") {
			t.Errorf("call %d: the system prompt holds a skill's body:\n%s", i+1, system)
		}
		if a, s := strings.Index(system, "Standing instructions"), strings.Index(system, "## Skills"); a < 0 || s < a {
			t.Errorf("call %d: standing instructions do not come before the skills:\n%s", i+1, system)
		}
	}
	if got := lastToolResult(reqs[1]); got != "REFUNDS BODY: read references/policy.md." {
		t.Errorf("the model got %q from readSkill", got)
	}
	var names []string
	for _, tl := range m.Tools()[0] {
		names = append(names, tl.Function.Name)
	}
	if !slices.Contains(names, "readSkill") || !slices.Contains(names, "readSkillFile") {
		t.Errorf("tools offered: %v", names)
	}
}

func toolResults(t *testing.T, events []stream.Event) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		if e.Type != stream.TypeToolResult {
			continue
		}
		var d struct {
			Output json.RawMessage `json:"output"`
			Error  string          `json:"error"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Error != "" {
			out = append(out, "error: "+d.Error)
			continue
		}
		out = append(out, string(d.Output))
	}
	return out
}

func systemPrompt(req []llms.MessageContent) string {
	var b strings.Builder
	for _, m := range req {
		if m.Role != llms.ChatMessageTypeSystem {
			continue
		}
		for _, p := range m.Parts {
			if tp, ok := p.(llms.TextContent); ok {
				b.WriteString(tp.Text)
			}
		}
	}
	return b.String()
}

func lastToolResult(req []llms.MessageContent) string {
	for i := len(req) - 1; i >= 0; i-- {
		for _, p := range req[i].Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				return r.Content
			}
		}
	}
	return ""
}
