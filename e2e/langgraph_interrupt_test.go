package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/docstext"

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
	mock := startAimock(t, "testdata/langgraph_interrupt.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "ops", "agent.md"), "---\nmodel: openai:gpt-4o-mini\napprove: [writeTodos]\n---\nYou plan releases.\n")
	writeFile(t, filepath.Join(app, "ops", "plan.md"), "- [ ] Plan the release\n")
	url := startDawn(t, buildDawn(t), app,
		"DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=", "DAWN_PERMISSIONS_MODE=",
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test")

	runNodeTests(t, dir, "interrupts.e2e.mjs", "LangGraph interrupt tests", 0, "DAWN_APPROVAL_URL="+url)
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
