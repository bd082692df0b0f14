package instructions_test

import (
	"strings"
	"testing"
)

// TestWorkersKeepStandingInstructions: the workers that run a route's
// steps (plan-first, parallel plans) get its standing instructions.
func TestWorkersKeepStandingInstructions(t *testing.T) {
	dir := writeApp(t, map[string]string{"AGENTS.md": "Answer in British English.", "a/agent.md": agentMD, "a/memory.md": "Escalate refunds."})
	p, err := prepare(t, dir, "/a")
	if err != nil {
		t.Fatal(err)
	}
	got := prompt(p.Worker())
	if !strings.Contains(got, "Answer in British English.") || !strings.Contains(got, "Escalate refunds.") {
		t.Errorf("a worker's prompt fragments: %q", got)
	}
}
