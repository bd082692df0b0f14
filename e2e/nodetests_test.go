package e2e

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var (
	nodePassed = regexp.MustCompile(`(?m)^ℹ pass (\d+)`)
	nodeFailed = regexp.MustCompile(`(?m)^ℹ fail (\d+)`)
)

// runNodeTests runs `node --test file` in dir (one test at a time, each
// within a minute, all within three) with env added, and fails t unless
// every test passed: exactly wantPass of them, or at least one when
// wantPass is 0. what names the tests in the failure.
func runNodeTests(t *testing.T, dir, file, what string, wantPass int, env ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed the package but node is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000", file)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s:\n%s", file, out)
	if err != nil {
		t.Fatalf("the %s failed: %v (their output is above)", what, err)
	}
	m := nodePassed.FindSubmatch(out)
	switch {
	case m == nil || string(m[1]) == "0":
		t.Fatalf("node --test ran no passing tests")
	case wantPass > 0 && string(m[1]) != strconv.Itoa(wantPass):
		t.Fatalf("node --test did not pass its %d tests", wantPass)
	}
	if m := nodeFailed.FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Fatalf("node --test reported failures")
	}
}
