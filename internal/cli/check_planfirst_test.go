package cli_test

import (
	"strings"
	"testing"
)

// TestCheckApprovalWithPlanFirst: approval: required together with a
// plan-first mode is a valid plan.md: the plan-first plan waits for a
// person before its first step.
func TestCheckApprovalWithPlanFirst(t *testing.T) {
	for _, mode := range []string{"auto", "always"} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"ship/agent.md": agentMD,
			"ship/plan.md":  "---\nenforce: true\napproval: required\nmode: " + mode + "\n---\n- [ ] Ship\n",
			"dawn.yaml":     "model: offline\n",
		})
		res := runDawn(t, "check", "--app", dir)
		if res.code != 0 || !strings.Contains(res.stdout, "ok: 1 route(s)") {
			t.Fatalf("mode %s: check exited %d\nstdout:\n%s\nstderr:\n%s", mode, res.code, res.stdout, res.stderr)
		}
	}
}
