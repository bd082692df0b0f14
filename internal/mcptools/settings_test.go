package mcptools_test

import (
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
)

// TestServerSettingsReachToolSpecs: a server's timeout: and idempotent:
// in dawn.yaml land on each of its tools' specs, where the agent loop
// reads them; without them a tool has neither.
func TestServerSettingsReachToolSpecs(t *testing.T) {
	for _, tc := range []struct {
		settings   string
		timeout    time.Duration
		idempotent bool
	}{
		{"", 0, false},
		{"    timeout: 1m30s\n    idempotent: true\n", 90 * time.Second, true},
		{"    idempotent: false\n", 0, false},
	} {
		dir := writeApp(t, "mcp:\n  test:\n    command: "+testServer(t)+"\n"+tc.settings, "tools: [test_echo]\n")
		a, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		tool := a.Routes["/desk"].Tool("test_echo")
		if tool == nil {
			t.Fatal("route /desk has no test_echo")
		}
		if spec := tool.Spec(); spec.Timeout != tc.timeout || spec.Idempotent != tc.idempotent {
			t.Errorf("settings %q: spec timeout %s idempotent %v, want %s %v", tc.settings, spec.Timeout, spec.Idempotent, tc.timeout, tc.idempotent)
		}
	}
}
