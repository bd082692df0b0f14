package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/cli"
)

// TestCheckReservedToolNames: `dawn check` of an app whose Go code
// registers tools named like the built-ins fails, naming the route, the
// tool and the reserved names.
func TestCheckReservedToolNames(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/agent.md": agentMD})
	tool := func(name string) capabilities.Tool {
		return capabilities.Func(name, "a tool", func(context.Context, struct{}) (string, error) { return "", nil })
	}
	var stdout, stderr bytes.Buffer
	code := cli.Run([]string{"check", "--app", dir}, cli.Config{
		Tools:      []capabilities.AppTool{{Tool: tool("readFile")}, {Tool: tool("recall"), Route: "/docs"}, {Tool: tool("search")}},
		ToolsKnown: true,
		Stdout:     &stdout, Stderr: &stderr,
	})
	if code != 1 {
		t.Fatalf("check exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	list := "(" + strings.Join(capabilities.ReservedToolNames, ", ") + ")"
	for _, want := range []string{
		`error: route /docs: the app's shared tool "readFile" (dawn.Tool) is named "readFile", which is reserved for Dawn's built-in tools ` + list + `; rename the tool`,
		`error: route /docs: the app's tool "recall" scoped to /docs (dawn.RouteTool) is named "recall", which is reserved`,
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), `"search"`) {
		t.Errorf("check reports the tool search, whose name is free:\n%s", stdout.String())
	}
}
