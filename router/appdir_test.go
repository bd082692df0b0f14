package router

import (
	"path/filepath"
	"testing"
)

func TestRouteAppDir(t *testing.T) {
	app := filepath.FromSlash("/srv/app")
	tests := []struct {
		name   string
		dir    string
		relDir string
		want   string
	}{
		{"the app folder's own route", app, "", app},
		{"a nested route", filepath.Join(app, "support", "[tenant]"), "support/[tenant]", app},
		{"a group folder", filepath.Join(app, "(marketing)", "blog"), "(marketing)/blog", app},
		{"a subagent", filepath.Join(app, "research", "subagents", "researcher"), "research/subagents/researcher", app},
		{"a route built by hand", filepath.FromSlash("/tmp/x"), "", filepath.FromSlash("/tmp/x")},
		{"RelDir not at the end of Dir", filepath.FromSlash("/tmp/x"), "y", filepath.FromSlash("/tmp/x")},
	}
	for _, tt := range tests {
		r := &Route{Dir: tt.dir, RelDir: tt.relDir}
		if got := r.AppDir(); got != tt.want {
			t.Errorf("%s: AppDir() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestDiscoverSkipsSkillFolders: a skills/ folder beside agent.md holds no
// agent.md, so neither it nor its skills are routes.
func TestDiscoverSkipsSkillFolders(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"support/agent.md":                           "Help.",
		"support/skills/refunds/SKILL.md":            "---\nname: refunds\ndescription: Refunds.\n---\nSteps.",
		"support/skills/refunds/references/rules.md": "Rules.",
		"skills/tone/SKILL.md":                       "---\nname: tone\ndescription: Tone.\n---\nBe kind.",
	})
	tree, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tree.Routes {
		ids = append(ids, r.ID)
	}
	if len(ids) != 1 || ids[0] != "/support" {
		t.Fatalf("routes %v, want only /support", ids)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if got := tree.Routes[0].AppDir(); got != dir && got != real {
		t.Errorf("AppDir = %s, want %s", got, dir)
	}
}
