package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunPlanPreviewAndPlanFirst(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"ops/agent.md":                   "You run operations.",
		"ops/plan.md":                    "---\nenforce: true\n---\n- [ ] Do the work\n",
		"ops/subagents/checker/agent.md": "You check things.",
		"plain/agent.md":                 "No plan.",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI(t, nil, "run", "/ops", "--app", dir, "--plain", "--plan-preview", "--input", "Deploy the service")
	if code != 0 || !strings.Contains(stdout, "E1") || !strings.Contains(stdout, "checker") || strings.Contains(stdout, "✓") || !strings.Contains(stderr, "the plan waits for approval as interrupt plan-") {
		t.Fatalf("preview: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, nil, "run", "/ops", "--app", dir, "--plain", "--plan-first", "always", "--input", "Deploy the service")
	if code != 0 || !strings.Contains(stdout, "E3: Check the result of step E2") || !strings.Contains(stdout, "Offline model") {
		t.Fatalf("plan-first: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr = runCLI(t, nil, "run", "/plain", "--app", dir, "--plan-preview", "--input", "x"); code != 1 || !strings.Contains(stderr, "enforce: true") {
		t.Fatalf("preview on a plain route: exit %d, %s", code, stderr)
	}
}
