package gomod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoot(t *testing.T) {
	base := t.TempDir()
	mod := filepath.Join(base, "mod")
	deep := filepath.Join(mod, "a", "b")
	notFile := filepath.Join(base, "dirmod")
	for _, d := range []string{deep, filepath.Join(notFile, "go.mod")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, want string
		ok        bool
	}{
		{mod, mod, true},
		{deep, mod, true},
		{notFile, "", false}, // a folder named go.mod is not a module
		{base, "", false},
	}
	for _, tt := range tests {
		got, ok := Root(tt.dir)
		if !tt.ok && ok && !strings.HasPrefix(got, base) {
			continue // the temp folder itself sits inside a module on this machine
		}
		if ok != tt.ok || got != tt.want {
			t.Errorf("Root(%s) = %q, %v; want %q, %v", tt.dir, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRootOfThisRepository(t *testing.T) {
	root, ok := Root(".")
	if !ok {
		t.Fatal("no go.mod above the package folder")
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "gomod", "gomod.go")); err != nil {
		t.Errorf("Root(.) = %s, which does not hold this package: %v", root, err)
	}
}
