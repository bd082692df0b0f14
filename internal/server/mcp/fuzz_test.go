package mcp_test

import (
	"testing"

	dawnmcp "github.com/dawn-go/dawn/internal/server/mcp"
)

// FuzzToolName: any route id gives a name MCP accepts: 1 to 128 letters,
// digits, '_' and '-'.
func FuzzToolName(f *testing.F) {
	for _, id := range []string{"/", "/support/[tenant]", "/docs/[[...slug]]", "/a/b.c", "/ü/[x]", ""} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		name := dawnmcp.ToolName(id)
		if name == "" || len(name) > 128 {
			t.Fatalf("ToolName(%q) = %q: want 1 to 128 characters", id, name)
		}
		for _, c := range []byte(name) {
			if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				t.Fatalf("ToolName(%q) = %q holds %q", id, name, c)
			}
		}
	})
}
