package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPlanMode: `dawn check` takes mode: parallel and reports a bad
// mode, and parallel with advance: manual, naming the plan.md (with the
// line of a bad key) and the key.
func TestCheckPlanMode(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fan/agent.md":    agentMD,
		"fan/plan.md":     "---\nenforce: true\nmode: parallel\nparallel: 3\n---\n",
		"typo/agent.md":   agentMD,
		"typo/plan.md":    "---\nenforce: true\nmode: paralel\n---\n- [ ] One\n",
		"manual/agent.md": agentMD,
		"manual/plan.md":  "---\nenforce: true\nmode: parallel\nadvance: manual\n---\n",
	})
	res := runDawn(t, "check", "--app", dir)
	if res.code != 1 {
		t.Fatalf("check exited %d, want 1\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, w := range []struct{ file, what string }{
		{filepath.Join(dir, "typo", "plan.md") + ":3", `front matter key "mode": must be sequential or parallel`},
		{filepath.Join(dir, "manual", "plan.md"), "mode: parallel runs the plan's items at once, so advance: manual"},
	} {
		found := false
		for line := range strings.Lines(res.stdout) {
			found = found || strings.HasPrefix(line, "error: ") && strings.Contains(line, w.file) && strings.Contains(line, w.what)
		}
		if !found {
			t.Errorf("check does not report %s (%s):\n%s", w.file, w.what, res.stdout)
		}
	}
	if strings.Contains(res.stdout, filepath.Join(dir, "fan")) {
		t.Errorf("check reports the valid parallel route:\n%s", res.stdout)
	}
}
