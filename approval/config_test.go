package approval

import (
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func section(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0].Content[1] // the value of the one top-level key
}

// TestConfigure: dawn.yaml's permissions section is read, the environment
// overrides its mode, and every mistake names the key and what to write.
func TestConfigure(t *testing.T) {
	m, err := marker{}.configure(section(t, "permissions: {mode: bypass, allow: {tool: [a], bash: [git  log, 'ls']}, deny: {tool: [b], bash: [rm -rf]}}"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(marker).app; got.mode != Bypass || got.allowTools[0] != "a" || got.denyTools[0] != "b" ||
		!slices.Equal(texts(got.bash.Allow), []string{"git log", "ls"}) || !slices.Equal(texts(got.bash.Deny), []string{"rm -rf"}) {
		t.Fatalf("configured %+v", got)
	}
	m, err = marker{}.configure(section(t, "permissions: {mode: bypass}"), NonInteractive)
	if err != nil || m.(marker).envMode != NonInteractive {
		t.Fatalf("%s did not override the mode: %+v %v", ModeEnv, m, err)
	}
	for _, c := range []struct{ yaml, env, want string }{
		{"permissions: {mode: sometimes}", "", "permissions.mode"},
		{"permissions: [a]", "", "permissions must be a mapping"},
		{"permissions: {allow: [a]}", "", "permissions.allow must be {tool: [names], bash: [command prefixes]}"},
		{"permissions: {deny: {shell: [rm]}}", "", `permissions.deny: unknown key "shell"`},
		{"permissions: {allow: {bash: [ls; rm]}}", "", "permissions.allow.bash[0]"},
		{"permissions: {allow: {bash: ['ls $HOME']}}", "", "permissions.allow.bash[0]"},
		{"permissions: {allow: {bash: ['ls > x']}}", "", "permissions.allow.bash[0]"},
		{"permissions: {allow: {bash: ['']}}", "", "permissions.allow.bash[0] is empty"},
		{"permissions: {ask: true}", "", `unknown key "ask"`},
		{"permissions: {}", "yes", ModeEnv},
	} {
		if _, err := (marker{}).configure(section(t, c.yaml), c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (env %q): error %v, want one naming %q", c.yaml, c.env, err, c.want)
		}
	}
}

// TestPreviewIsBounded: argsPreview is at most PreviewMax characters,
// counted in runes, and marks a cut.
func TestPreviewIsBounded(t *testing.T) {
	long := strings.Repeat("é", PreviewMax+10)
	got := preview(long)
	if n := len([]rune(got)); n != PreviewMax || !strings.HasSuffix(got, "…") {
		t.Fatalf("preview of %d runes has %d runes: …%s", PreviewMax+10, n, got[len(got)-10:])
	}
	if preview("{}") != "{}" {
		t.Fatal("a short preview changed")
	}
}
