package e2e

import (
	"context"
	"github.com/dawn-go/dawn/internal/docstext"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestLangGraphInterrupts runs tools/langgraph/interrupts.e2e.mjs, the
// LangGraph SDK's client and its React useStream, against the stock dawn
// binary on aimock (testdata/langgraph_interrupt.json) serving a route
// whose writeTodos calls need approval: a run parks, the client sees
// __interrupt__ (values, updates, state, thread, useStream's interrupt),
// and command.resume answers it.
func TestLangGraphInterrupts(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	mock := startAimock(t, "testdata/langgraph_interrupt.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "ops", "agent.md"), "---\nmodel: openai:gpt-4o-mini\napprove: [writeTodos]\n---\nYou plan releases.\n")
	writeFile(t, filepath.Join(app, "ops", "plan.md"), "- [ ] Plan the release\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", "interrupts.e2e.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_APPROVAL_URL="+url, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test interrupts.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the LangGraph interrupt tests failed: %v (their output is above)", err)
	}
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) == "0" {
		t.Fatalf("node --test ran no passing tests")
	}
	if m := regexp.MustCompile(`(?m)^ℹ fail (\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Fatalf("node --test reported failures")
	}
}

// TestReadmeLangGraphInterruptExample: the README's LangGraph interrupt
// example is the code between the readme:langgraph-interrupt markers of a
// test of interrupts.e2e.mjs that passes.
func TestReadmeLangGraphInterruptExample(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "tools", "langgraph", "interrupts.e2e.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := docstext.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	readme := []byte(docs)
	_, rest, ok := strings.Cut(string(src), "// readme:langgraph-interrupt begin\n")
	region, _, ok2 := strings.Cut(rest, "// readme:langgraph-interrupt end\n")
	if !ok || !ok2 {
		t.Fatal("interrupts.e2e.mjs has no readme:langgraph-interrupt begin/end markers")
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(region, " \n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "  ")) // the test body's indent
	}
	_, after, ok := strings.Cut(string(readme), "<!-- readme:langgraph-interrupt -->\n```js\n")
	block, _, ok2 := strings.Cut(after, "```\n")
	if !ok || !ok2 {
		t.Fatal("README has no ```js block after <!-- readme:langgraph-interrupt -->")
	}
	if want := strings.Join(lines, "\n") + "\n"; block != want {
		t.Errorf("the README's LangGraph interrupt example is not the tested code; the test runs:\n%s\nthe README shows:\n%s", want, block)
	}
}
