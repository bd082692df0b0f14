package router

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParseAgentClaims: a key a capability claims is kept in Sections with
// its YAML value, never set on the router's own fields; an unclaimed key
// is still an error that lists the claimed keys beside the router's.
func TestParseAgentClaims(t *testing.T) {
	const doc = "---\nmodel: m\nworkspace: files\n---\nHi"
	tests := []struct {
		name    string
		claims  Claims
		wantErr string // "" when it parses
		want    string // the workspace section's text
	}{
		{"no claims", Claims{}, `agent.md:3: unknown front matter key "workspace"; allowed keys: model, description, tools, max_turns, temperature, approve`, ""},
		{"claimed", Claims{Keys: []string{"workspace"}}, "", "files"},
		{"any", Claims{Any: true}, "", "files"},
		{"another key claimed", Claims{Keys: []string{"memory", "memory"}}, `unknown front matter key "workspace"; allowed keys: model, description, tools, max_turns, temperature, approve, memory`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAgentWith("agent.md", []byte(doc), tt.claims)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Model != "m" || a.Sections["workspace"] == nil || a.Sections["workspace"].Value != tt.want || a.Sections["workspace"].Line != 2 {
				t.Fatalf("agent %+v, sections %v", a, a.Sections)
			}
		})
	}
	// A capability cannot claim a router key: its value stays the router's.
	a, err := ParseAgentWith("agent.md", []byte("---\nmodel: m\n---\n"), Claims{Keys: []string{"model"}, Any: true})
	if err != nil || a.Model != "m" || a.Sections != nil {
		t.Fatalf("model claimed: %+v, %v", a, err)
	}
}

// TestDiscoverWithClaims: discovery accepts the claimed keys in every
// agent.md and still names the file and line of an unclaimed one.
func TestDiscoverWithClaims(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"a/agent.md": "---\nworkspace: thread\n---\nHi",
		"b/agent.md": "---\nworkspce: thread\n---\nHi",
	})
	tree, err := DiscoverWith(dir, Claims{Keys: []string{"workspace"}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join("b", "agent.md")+`:2: unknown front matter key "workspce"`) || !strings.Contains(err.Error(), "approve, workspace") {
		t.Fatalf("error %v, want b/agent.md's unknown key with the claimed key listed", err)
	}
	if tree == nil || len(tree.Routes) != 1 || tree.Routes[0].Agent.Sections["workspace"].Value != "thread" {
		t.Fatalf("routes %+v", tree)
	}
	if _, err := Discover(dir); err == nil || !strings.Contains(err.Error(), `unknown front matter key "workspace"`) {
		t.Fatalf("Discover without claims: %v", err)
	}
}
