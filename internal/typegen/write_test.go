package typegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSync(t *testing.T) {
	appDir := writeApp(t, map[string]string{
		"a/agent.md": agentMD,
		"b/agent.md": agentMD,
		"b/plan.md":  "- [ ] x\n",
	})
	out := filepath.Join(t.TempDir(), "dawngen")

	files, err := Generate(loadApp(t, appDir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Sync(out, files)
	if err != nil {
		t.Fatal(err)
	}
	wantAll := "dawn.generated.d.ts dawngen.go schemas/a.state.json schemas/a.tools.json schemas/b.state.json schemas/b.tools.json"
	if got := strings.Join(ch.Written, " "); got != wantAll || len(ch.Unchanged)+len(ch.Removed) != 0 {
		t.Fatalf("first sync = %+v", ch)
	}

	// Unchanged files are not rewritten.
	goFile := filepath.Join(out, GoFile)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(goFile, old, old); err != nil {
		t.Fatal(err)
	}
	ch, err = Sync(out, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Written) != 0 || strings.Join(ch.Unchanged, " ") != wantAll {
		t.Errorf("second sync = %+v, want everything unchanged", ch)
	}
	if info, _ := os.Stat(goFile); !info.ModTime().Equal(old) {
		t.Error("an unchanged file was rewritten")
	}

	// A user's own file in schemas/ is left alone when routes go away.
	userFile := filepath.Join(out, SchemaDir, "mine.tools.json")
	if err := os.WriteFile(userFile, []byte(`{"title":"mine"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(appDir, "b")); err != nil {
		t.Fatal(err)
	}
	files, err = Generate(loadApp(t, appDir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err = Sync(out, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ch.Removed, " "); got != "schemas/b.state.json schemas/b.tools.json" {
		t.Errorf("removed = %q", got)
	}
	if got := strings.Join(ch.Written, " "); got != "dawn.generated.d.ts dawngen.go" {
		t.Errorf("written = %q", got)
	}
	if _, err := os.Stat(userFile); err != nil {
		t.Errorf("the user's file is gone: %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, "*", ".*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestSyncRefusesUserFiles(t *testing.T) {
	out := t.TempDir()
	mine := filepath.Join(out, GoFile)
	if err := os.WriteFile(mine, []byte("package mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Sync(out, files)
	if err == nil || !strings.Contains(err.Error(), mine) || !strings.Contains(err.Error(), "not written by dawn typegen") {
		t.Errorf("error = %v, want one naming %s", err, mine)
	}
	if data, _ := os.ReadFile(mine); string(data) != "package mine\n" {
		t.Error("the user's file was overwritten")
	}
}

func TestSyncRejectsBadPaths(t *testing.T) {
	for _, rel := range []string{"../x.go", "/abs.go", ".", ""} {
		if _, err := Sync(t.TempDir(), map[string][]byte{rel: []byte("// " + GeneratedMarker)}); err == nil {
			t.Errorf("path %q was accepted", rel)
		}
	}
}

func TestSyncRemovesEmptySchemaDir(t *testing.T) {
	out := t.TempDir()
	a := loadApp(t, writeApp(t, map[string]string{"agent.md": agentMD}))
	files, err := Generate(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sync(out, files); err != nil {
		t.Fatal(err)
	}
	empty, err := Generate(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sync(out, empty); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, SchemaDir)); !os.IsNotExist(err) {
		t.Errorf("schemas/ is still there: %v", err)
	}
}
