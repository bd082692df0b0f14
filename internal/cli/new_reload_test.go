package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/gomod"
)

// TestNewSaysHowGoEditsReload: what dawn new prints, the app's README and
// main.go say that go run . dev rebuilds on .go edits (which
// TestNewAppRunsAndPassesItsTest checks it does).
func TestNewSaysHowGoEditsReload(t *testing.T) {
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	dir := filepath.Join(t.TempDir(), "hello")
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"new", dir, "--replace", root}, Config{Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("dawn new exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "go run . dev     # serve it with the offline model; reloads .md and .yaml edits, rebuilds on .go edits") {
		t.Errorf("dawn new does not say that go run . dev rebuilds on .go edits:\n%s", stdout.String())
	}
	if readme := readFile(t, filepath.Join(dir, "README.md")); !strings.Contains(readme, "on every `.go` edit it\nrebuilds the app and restarts it on the same address") {
		t.Errorf("the app's README does not say how Go edits reload:\n%s", readme)
	}
	if main := readFile(t, filepath.Join(dir, "main.go")); !strings.Contains(main, "go run . dev      # serve ./app on 127.0.0.1; rebuilds and restarts on .go edits") {
		t.Errorf("main.go's comment does not say how Go edits reload:\n%s", main)
	}
}
