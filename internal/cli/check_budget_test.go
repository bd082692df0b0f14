package cli_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/cli"
)

// TestCheckWarnsOfAPromptOverTheBudget: `dawn check` warns of a route whose
// system prompt and tool definitions alone exceed its
// context.max_input_tokens, naming the route, the estimate, the setting and
// the file, and not of a route that fits; the app is still ok. The budget
// is the built-in context capability's, set for every route in dawn.yaml.
func TestCheckWarnsOfAPromptOverTheBudget(t *testing.T) {
	var long strings.Builder
	for i := range 400 {
		fmt.Fprintf(&long, "Rule %d: check invoice %d before you answer. ", i, i*13)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"dawn.yaml":      "context: {max_input_tokens: 1000}\n",
		"long/agent.md":  "---\nmodel: openai:gpt-4o-mini\n---\n" + long.String(),
		"long/plan.md":   "- [ ] Read the rules\n",
		"short/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou answer briefly.\n",
	})
	var stdout, stderr bytes.Buffer
	code := cli.Run([]string{"check", "--app", dir}, cli.Config{Stdout: &stdout, Stderr: &stderr})
	out := stdout.String()
	if code != 0 {
		t.Fatalf("check exited %d, want 0 (a warning is no problem)\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	want := "warning: route /long: its system prompt and tool definitions alone are about "
	if !strings.Contains(out, want) || !strings.Contains(out, "more than context.max_input_tokens (1000)") || !strings.Contains(out, filepath.Join(dir, "long", "agent.md")) {
		t.Errorf("check output lacks the budget warning for /long:\n%s", out)
	}
	if strings.Contains(out, "route /short:") {
		t.Errorf("check warns of /short, which fits:\n%s", out)
	}
}
