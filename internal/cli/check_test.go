package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// agentMD is a valid agent.md with a description.
const agentMD = "---\ndescription: A route\n---\nYou help.\n"

func TestCheckListsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"ok/agent.md":                   agentMD,
		"[a-b c]/agent.md":              agentMD,
		"bad/agent.md":                  "---\ndescription: Bad\nbogus_key: 1\n---\nYou help.\n",
		"planner/agent.md":              agentMD,
		"planner/plan.md":               "- [ ] One\n",
		"planner/state.yaml":            "todos:\n  type: array\n",
		"(g1)/dup/agent.md":             agentMD,
		"(g2)/dup/agent.md":             agentMD,
		"(g2)/fine/agent.md":            agentMD,
		"_drafts/x/agent.md":            "---\nbroken: [\n",
		"research/agent.md":             agentMD,
		"research/subagents/r/agent.md": agentMD,
	})
	res := runDawn(t, "check", "--app", dir)
	if res.code != 1 {
		t.Fatalf("check exited %d, want 1\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	want := []struct{ file, what string }{
		{filepath.Join(dir, "[a-b c]"), `folder name "[a-b c]"`},
		{filepath.Join(dir, "bad", "agent.md") + ":3", "bogus_key"},
		{filepath.Join(dir, "planner", "state.yaml"), `state field "todos"`},
		{filepath.Join(dir, "planner", "plan.md"), "capability conflict"},
		{filepath.Join(dir, "(g1)", "dup"), "route id /dup"},
		{filepath.Join(dir, "(g2)", "dup"), "route id /dup"},
	}
	lines := strings.Split(res.stdout, "\n")
	for _, w := range want {
		found := false
		for _, line := range lines {
			if strings.HasPrefix(line, "error: ") && strings.Contains(line, w.file) && strings.Contains(line, w.what) {
				found = true
			}
		}
		if !found {
			t.Errorf("check does not report %s (%s) on an error line:\n%s", w.file, w.what, res.stdout)
		}
	}
	for _, clean := range []string{"ok", "fine", "research", "_drafts"} {
		if strings.Contains(res.stdout, filepath.Join(dir, clean)) {
			t.Errorf("check reports the clean folder %s:\n%s", clean, res.stdout)
		}
	}
	if !strings.Contains(res.stderr, "5 problem(s)") {
		t.Errorf("stderr = %q, want the number of problems (5)", res.stderr)
	}
}

func TestCheckCleanApp(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md":     agentMD,
		"support/[tenant]/plan.md":      "- [ ] One\n- [x] Two\n",
		"support/[tenant]/state.yaml":   "ticket_id:\n  type: string\n",
		"research/agent.md":             agentMD,
		"research/subagents/r/agent.md": agentMD,
		"dawn.yaml":                     "model: offline\n",
	})
	res := runDawn(t, "check", "--app", dir)
	if res.code != 0 {
		t.Fatalf("check exited %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "ok: 3 route(s)") {
		t.Errorf("stdout = %q, want ok: 3 route(s)", res.stdout)
	}
}

// TestUsageErrors checks that bad flags and arguments exit 2, and a missing
// app folder (the app's problem) exits 1.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/agent.md": agentMD})
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--app", dir, "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"check", "--app", dir, "extra"}, 2, "extra"},
		{[]string{"routes", "--app", dir, "--json", "extra"}, 2, "extra"},
		{[]string{"routes", "--app", dir, "--jsn"}, 2, "unknown flag: --jsn"},
		{[]string{"dev", "--app", dir, "--port", "x"}, 2, "--port"},
		{[]string{"dev", "--app", dir, "--port", "70000"}, 2, "--port 70000"},
		{[]string{"dev", "--app", dir, "extra"}, 2, "extra"},
		{[]string{"nosuchcommand"}, 2, "nosuchcommand"},
		{[]string{"check", "--app", filepath.Join(dir, "missing")}, 1, "missing"},
		{[]string{"dev", "--app", filepath.Join(dir, "missing")}, 1, "missing"},
	}
	for _, tt := range tests {
		res := runDawn(t, tt.args...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("dawn %v: exit %d, stderr %q; want exit %d and %q", tt.args, res.code, res.stderr, tt.code, tt.want)
		}
	}
}

// TestCheckPromptTemplates: dawn check reports a template syntax error and
// each unknown name with the file and line, and passes a route that uses
// its params and state and a model fallback list.
func TestCheckPromptTemplates(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md":   "---\nmodel: [offline, openai:gpt-4o-mini]\n---\nYou help {{ .Params.tenant }} with {{ .State.ticket_id }}.\n",
		"support/[tenant]/state.yaml": "ticket_id:\n  type: string\n",
		"typo/[tenant]/agent.md":      "---\ndescription: d\n---\nYou help\n{{ .Params.tennant }} and {{ .State.mood }}.\n",
		"broken/agent.md":             "You help {{ .Params.x \n",
	})
	res := runDawn(t, "check", "--app", dir)
	if res.code != 1 {
		t.Fatalf("check exited %d, want 1\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		filepath.Join(dir, "typo", "[tenant]", "agent.md") + `:5: prompt template: route /typo/[tenant] has no param "tennant"`,
		filepath.Join(dir, "typo", "[tenant]", "agent.md") + `:5: prompt template: route /typo/[tenant] has no state field "mood"`,
		filepath.Join(dir, "broken", "agent.md") + `:1: unclosed action`,
	} {
		if !strings.Contains(res.stdout, "error: ") || !strings.Contains(res.stdout, want) {
			t.Errorf("check output does not hold %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, filepath.Join(dir, "support")) {
		t.Errorf("check reports the good route:\n%s", res.stdout)
	}
}
