package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestA2AClientLibrary drives the A2A endpoints of the stock binary
// (`dawn start`, JWT auth) with the JavaScript SDK (@a2a-js/sdk):
// tools/clients/a2a.test.mjs sends, streams a task with its plan, gets,
// drops a stream and resubscribes, cancels, answers an approval through
// input-required, and is refused another user's contextId as missing.
// The routes run on a scripted model (testdata/a2a/model.yaml), and the
// slow one on aimock over the OpenAI wire, paced so that a run is in
// flight long enough to act on.
func TestA2AClientLibrary(t *testing.T) {
	dir := nodetool.Package(t, "clients", filepath.Join("@a2a-js", "sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed the client tools but node is not on PATH")
	}
	mock := startAimockPaced(t, "testdata/a2a/slow.json", 100, 4)
	script, err := os.ReadFile(filepath.Join("testdata", "a2a", "model.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app := apptest.WriteApp(t, map[string]string{
		"dawn.yaml":                 "auth:\n  jwt:\n    secret_env: A2A_JWT_SECRET\n    audience: dawn\n",
		"model.yaml":                string(script),
		"support/[tenant]/agent.md": "---\ndescription: Answers customer questions.\nmodel: script:model.yaml\n---\nYou help customers.",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
		"ops/agent.md":              "---\ndescription: Keeps notes, with a person's approval.\nmodel: script:model.yaml\nworkspace: thread\napprove: [writeFile]\n---\nYou keep notes.",
		"slow/agent.md":             "---\ndescription: Answers slowly.\nmodel: openai:gpt-4o-mini\n---\nYou take your time.",
	})
	const secret = "a2a-e2e-jwt-secret"
	env := append(aimockEnv(mock), "A2A_JWT_SECRET="+secret, "DAWN_CORS_ORIGINS=", "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	url := startDawn(t, buildDawn(t), app, env...)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join(dir, "a2a.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "NO_COLOR=1",
		"DAWN_TOKEN_ANN="+authtest.HS256(t, secret, authtest.Claims("ann", "", "dawn")),
		"DAWN_TOKEN_BOB="+authtest.HS256(t, secret, authtest.Claims("bob", "", "dawn")))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tools/clients/a2a.test.mjs against %s: %v\n%s", url, err, out)
	}
	t.Logf("node --test tools/clients/a2a.test.mjs:\n%s", out)
}

// TestDocsA2AExample checks that the A2A page's JavaScript example ends
// with the code between the docs markers of tools/clients/a2a.test.mjs,
// which TestA2AClientLibrary runs, and imports nothing the test does not.
func TestDocsA2AExample(t *testing.T) {
	example, code, test := clientExample(t, "a2a.md", "docs:a2a", "a2a.test.mjs")
	var lines []string
	for line := range strings.Lines(code) {
		lines = append(lines, strings.TrimPrefix(line, "  "))
	}
	if got := strings.TrimRight(strings.Join(lines, ""), " "); !strings.HasSuffix(example, got) {
		t.Errorf("the docs' A2A example does not end with the tested code.\ndocs:\n%s\ntools/clients/a2a.test.mjs:\n%s", example, got)
	}
	checkExampleImports(t, "A2A", example, test)
}
