package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/gomod"
)

// TestNewSaysHowGoEditsReload: go run . dev serves the Go code it was
// built from, so what dawn new prints, the app's README and main.go name
// the command that rebuilds on .go edits, never promising live reload of
// Go code it does not do.
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
	if !strings.Contains(stdout.String(), "dawn dev         # the same, and rebuilds and restarts on .go edits") {
		t.Errorf("dawn new does not say which command reloads Go edits:\n%s", stdout.String())
	}
	if readme := readFile(t, filepath.Join(dir, "README.md")); !strings.Contains(readme, "`dawn dev` from this folder, which rebuilds and restarts the app on every\n`.go` edit") {
		t.Errorf("the app's README does not say how Go edits reload:\n%s", readme)
	}
	if main := readFile(t, filepath.Join(dir, "main.go")); strings.Contains(main, "live reload") || !strings.Contains(main, "rebuilds and restarts on .go edits") {
		t.Errorf("main.go's comment promises what go run . dev does not do:\n%s", main)
	}
}
