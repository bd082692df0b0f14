package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
)

// newApp writes a dawn new app replacing Dawn with this checkout, as
// dawn new does on a machine with no released version, and returns its
// folder.
func newApp(t *testing.T) string {
	t.Helper()
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	dir := filepath.Join(t.TempDir(), "hello")
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"new", dir, "--replace", root}, Config{Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("dawn new exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	return dir
}

// dockerContext copies what docker build would send of dir: everything
// but what .dockerignore names (the patterns dawn build writes).
func dockerContext(t *testing.T, dir string) string {
	t.Helper()
	ctx := filepath.Join(t.TempDir(), "context")
	if err := os.CopyFS(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(readFile(t, filepath.Join(dir, ".dockerignore")), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "*") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(ctx, filepath.FromSlash(line))); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

var buildRun = regexp.MustCompile(`(?s)\nRUN (rm -rf vendor.*?-o /out/dawn-app \S+)\n`)

// TestBuildVendorsWhatTheReplaceNames: the go.mod of a dawn new app
// replaces Dawn with a checkout outside the build context. dawn build
// vendors the app's modules into the context, and the Dockerfile's build
// step, run on a copy of what docker build would send with no network,
// builds the app.
func TestBuildVendorsWhatTheReplaceNames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new app")
	}
	start := time.Now()
	dir := newApp(t)
	t.Logf("dawn new: %s", time.Since(start))
	code, stdout, stderr := buildApp("--app", filepath.Join(dir, "app"))
	if code != ExitOK {
		t.Fatalf("dawn build exited %d:\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "vendored the app's modules into") {
		t.Errorf("dawn build did not say it vendored: %s", stderr)
	}
	t.Logf("dawn build: %s", time.Since(start))
	docker := readFile(t, filepath.Join(dir, "Dockerfile"))
	m := buildRun.FindStringSubmatch(docker)
	if m == nil {
		t.Fatalf("the Dockerfile has no vendored build step:\n%s", docker)
	}
	ctx := dockerContext(t, dir)
	bin := filepath.Join(t.TempDir(), "dawn-app")
	step := strings.ReplaceAll(strings.ReplaceAll(m[1], "\\\n", " "), "/out/dawn-app", bin)
	cmd := exec.Command("sh", "-c", step)
	cmd.Dir = ctx
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build step %q failed: %v\n%s", step, err, out)
	}
	t.Logf("the build step: %s", time.Since(start))
	if out, err := exec.Command(bin, "routes", "--app", filepath.Join(ctx, "app")).CombinedOutput(); err != nil || !strings.Contains(string(out), "/assistant") {
		t.Errorf("the built binary's routes: %v\n%s", err, out)
	}
}
