package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/cli"
)

// TestRoutesShowsMCPServers: `dawn routes` names each MCP server of
// dawn.yaml with its tools, and the CLI stops the server before it exits.
func TestRoutesShowsMCPServers(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-server")
	if out, err := exec.Command("go", "build", "-o", bin, "../mcptools/testdata/server").CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"desk/agent.md": "---\ndescription: Desk\ntools: [test_echo]\n---\nYou help.\n",
		"dawn.yaml":     "mcp:\n  test:\n    command: " + bin + "\n",
	})
	var stdout, stderr bytes.Buffer
	// In process, so that a server the CLI left running would outlive Run.
	if code := cli.Run([]string{"routes", "--app", dir}, cli.Config{Stock: true, Stdout: &stdout, Stderr: &stderr}); code != 0 {
		t.Fatalf("routes exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "MCP server test (dawn.yaml mcp.test): stdio "+bin+"; tools: test_add, test_echo, test_exit, test_fail, test_pid") {
		t.Errorf("routes output does not list the MCP server and its tools:\n%s", stdout.String())
	}
	json := runDawn(t, "routes", "--app", dir, "--json")
	if !strings.Contains(json.stdout, `"test_echo"`) {
		t.Errorf("routes --json does not list test_echo among /desk's tools:\n%s", json.stdout)
	}
	// The CLI stops the server before Run returns: no process runs bin.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if cmdline, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(cmdline), bin+"\x00") {
			t.Errorf("MCP server %s (%s) still runs after the CLI exited", bin, p)
		}
	}
}

// TestRoutesReuseSavedMCPListing: dawn routes and check answer from the
// tool listing a first load saved, without starting the server again
// (here it could not start: its binary is gone); a serving command would
// list afresh.
func TestRoutesReuseSavedMCPListing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-server")
	if out, err := exec.Command("go", "build", "-o", bin, "../mcptools/testdata/server").CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"desk/agent.md": "---\ndescription: Desk\ntools: [test_echo]\n---\nYou help.\n",
		"dawn.yaml":     "mcp:\n  test:\n    command: " + bin + "\n",
	})
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(append(args, "--app", dir), cli.Config{Stock: true, Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String() + stderr.String()
	}
	if code, out := run("routes"); code != 0 {
		t.Fatalf("first routes exited %d:\n%s", code, out)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"routes", "check"} {
		code, out := run(cmd)
		if code != 0 || (cmd == "routes" && !strings.Contains(out, "tools: test_add, test_echo")) {
			t.Errorf("%s after the server's binary went: exit %d, want 0 from the saved listing:\n%s", cmd, code, out)
		}
	}
}
