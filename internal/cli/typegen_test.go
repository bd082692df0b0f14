package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/cli"
)

// typegenApp writes an app for typegen tests and returns its folder.
func typegenApp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runTypegen runs `dawn typegen` in-process as the stock binary.
func runTypegen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(append([]string{"typegen"}, args...), cli.Config{Stock: true, Stdout: &out, Stderr: &errOut, Env: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestTypegenWritesAndRewritesNothing(t *testing.T) {
	dir := typegenApp(t, map[string]string{
		"support/[tenant]/agent.md": agentMD,
		"support/[tenant]/plan.md":  "- [ ] One\n",
	})
	code, stdout, stderr := runTypegen(t, "--app", dir)
	if code != cli.ExitOK {
		t.Fatalf("typegen exited %d\n%s%s", code, stdout, stderr)
	}
	out := filepath.Join(dir, "dawngen")
	for _, rel := range []string{"dawngen.go", "dawn.generated.d.ts", "schemas/support_tenant.tools.json", "schemas/support_tenant.state.json"} {
		p := filepath.Join(out, filepath.FromSlash(rel))
		if !strings.Contains(stdout, "wrote "+p+"\n") {
			t.Errorf("stdout does not say it wrote %s:\n%s", p, stdout)
		}
	}
	src, err := os.ReadFile(filepath.Join(out, "dawngen.go"))
	if err != nil || !strings.Contains(string(src), "type SupportTenantWriteTodosInput struct") {
		t.Errorf("dawngen.go lacks the writeTodos input (err %v)", err)
	}

	code, stdout, _ = runTypegen(t, "--app", dir)
	if code != cli.ExitOK || strings.Contains(stdout, "wrote") || !strings.Contains(stdout, "4 file(s) unchanged") {
		t.Errorf("second run: exit %d, stdout:\n%s", code, stdout)
	}
}

func TestTypegenOutFolderNamesThePackage(t *testing.T) {
	dir := typegenApp(t, map[string]string{"agent.md": agentMD})
	out := filepath.Join(t.TempDir(), "api")
	if code, stdout, stderr := runTypegen(t, "--app", dir, "--out", out); code != cli.ExitOK {
		t.Fatalf("typegen exited %d\n%s%s", code, stdout, stderr)
	}
	src, err := os.ReadFile(filepath.Join(out, "dawngen.go"))
	if err != nil || !strings.Contains(string(src), "\npackage api\n") {
		t.Errorf("dawngen.go is not package api (err %v)", err)
	}
}

func TestTypegenBrokenApp(t *testing.T) {
	dir := typegenApp(t, map[string]string{
		"ok/agent.md":        agentMD,
		"bad/agent.md":       "---\nbogus_key: 1\n---\nYou help.\n",
		"planner/agent.md":   agentMD,
		"planner/plan.md":    "- [ ] One\n",
		"planner/state.yaml": "todos:\n  type: array\n",
	})
	code, stdout, stderr := runTypegen(t, "--app", dir)
	if code != cli.ExitProblem {
		t.Fatalf("typegen exited %d, want %d\n%s%s", code, cli.ExitProblem, stdout, stderr)
	}
	if !strings.Contains(stderr, "bogus_key") || !strings.Contains(stderr, "capability conflict") || !strings.Contains(stderr, "wrote nothing") {
		t.Errorf("stderr does not list the problems:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "dawngen")); !os.IsNotExist(err) {
		t.Errorf("typegen wrote files for a broken app: %v", err)
	}
}

func TestTypegenWarnsAboutUnknownGoTools(t *testing.T) {
	dir := typegenApp(t, map[string]string{
		"agent.md": agentMD,
		"main.go":  "package main\n\nfunc main() {}\n",
	})
	code, stdout, stderr := runTypegen(t, "--app", dir)
	if code != cli.ExitOK {
		t.Fatalf("typegen exited %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "input types are missing") || !strings.Contains(stderr, "go run "+filepath.ToSlash(dir)+" typegen --app "+dir) {
		t.Errorf("stderr does not warn about the app's Go tools:\n%s", stderr)
	}
}
