package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestMCPServerClients runs the official MCP TypeScript client
// (tools/mcp/server.test.mjs, with `node --test`) against the stock dawn
// binary's /mcp endpoint, behind an API key, on openai:gpt-4o-mini with
// OPENAI_BASE_URL pointed at aimock: the routes are listed as tools, a call
// answers with progress carrying plan updates, and a call whose tool needs
// approval (the ops MCP server's ops_deploy) reports the interrupt.
func TestMCPServerClients(t *testing.T) {
	dir := nodetool.Package(t, "mcp", filepath.Join("@modelcontextprotocol", "sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/mcp but node is not on PATH")
	}
	mock := startAimock(t, "testdata/mcp_server.json")
	app, _ := opsApp(t, buildOpsMCP(t))
	writeFiles(t, app, map[string]string{
		"support/[tenant]/agent.md": "---\nmodel: openai:gpt-4o-mini\ndescription: support\n---\nYou help customers.\n",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Write the final response\n",
	})
	const key = "mcp-e2e-key"
	env := append(aimockEnv(mock), "DAWN_API_KEY="+key, "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	url := startDawn(t, buildDawn(t), app, env...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", "server.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_KEY="+key, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test server.test.mjs in tools/mcp:\n%s", out)
	if err != nil {
		t.Fatalf("the MCP client tests failed: %v (their output is above)", err)
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "4" {
		t.Fatalf("node --test did not pass the 4 MCP client tests")
	}
	checkDocsCopied(t, filepath.Join(repoRoot(t), "docs", "mcp-server.md"), "<!-- docs:mcp-client -->", filepath.Join(dir, "server.test.mjs"))
}

// checkDocsCopied checks that each code block after marker in doc is a
// copy of lines of src, up to each line's indentation.
func checkDocsCopied(t *testing.T, doc, marker, src string) {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dedent := func(s string) string {
		var b strings.Builder
		for line := range strings.Lines(s) {
			b.WriteString(strings.TrimLeft(line, " \t"))
		}
		return b.String()
	}
	parts := strings.Split(string(text), marker+"\n")[1:]
	if len(parts) == 0 {
		t.Fatalf("%s has no %s block", doc, marker)
	}
	for _, part := range parts {
		_, rest, _ := strings.Cut(part, "\n") // the fence line
		block, _, _ := strings.Cut(rest, "```")
		if !strings.Contains(dedent(string(code)), dedent(block)) {
			t.Errorf("%s: this block is not in %s:\n%s", doc, src, block)
		}
	}
}
