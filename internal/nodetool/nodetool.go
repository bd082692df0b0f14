// Package nodetool finds the Node.js test tools a test needs (aimock, the
// client libraries users have) and installs them on first use with `npm ci`
// from the pinned lock file under tools/. It is for tests only.
//
// A missing tool is installed when npm is on PATH. The test is skipped only
// where npm is absent, and fails instead when the environment variable the
// caller names (such as DAWN_REQUIRE_AIMOCK) is "1", as CI sets it.
package nodetool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dawn-go/dawn/internal/gomod"
)

// RepoRoot returns the module root: the nearest folder above the working
// directory that holds a go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test's folder")
	}
	return root
}

// Package returns the folder of the npm package tools/<name> with its
// node_modules installed, installing them with `npm ci` when bin (a file
// under node_modules, such as ".bin/llmock") is missing. Without npm the
// test is skipped, or fails when os.Getenv(requireEnv) is "1".
func Package(t testing.TB, name, bin, requireEnv string) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "tools", name)
	target := filepath.Join(dir, "node_modules", bin)
	if _, err := os.Stat(target); err == nil {
		return dir
	}
	fail := t.Skipf
	if os.Getenv(requireEnv) == "1" {
		fail = t.Fatalf
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		fail("%s is not installed (%s is missing) and npm is not on PATH to install it: install Node.js and npm, then run `npm ci --prefix tools/%s` from the repository root", name, target, name)
		return ""
	}
	if err := install(npm, dir, target); err != nil {
		t.Fatalf("installing the test tool tools/%s with `npm ci`: %v", name, err)
	}
	return dir
}

// install runs `npm ci` in dir once, holding a file lock so that test
// binaries of several packages running at once do not install over each
// other.
func install(npm, dir, target string) error {
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(target); err == nil {
		return nil // another test binary installed it while we waited
	}
	fmt.Fprintf(os.Stderr, "nodetool: installing tools/%s with `npm ci` (once; later runs reuse it)\n", filepath.Base(dir))
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("npm ci finished but %s is still missing", target)
	}
	return nil
}
