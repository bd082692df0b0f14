package e2e

import (
	"bytes"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// requireAimockEnv makes a missing aimock fail the test instead of skipping
// it. .ci/run sets it.
const requireAimockEnv = "DAWN_REQUIRE_AIMOCK"

// answer is what the fixture's second turn says.
const answer = "Your account is in good standing."

// userMessage is what the fixture matches on.
const userMessage = "Help me with my account"

// repoRoot is the module root: the nearest parent folder with a go.mod.
func repoRoot(t *testing.T) string { return nodetool.RepoRoot(t) }

// aimockBin finds the llmock binary (the aimock CLI that takes -f fixtures)
// under tools/aimock, installing it with `npm ci` on first use. Without npm
// the test skips, or fails when DAWN_REQUIRE_AIMOCK=1.
func aimockBin(t *testing.T) string {
	t.Helper()
	dir := nodetool.Package(t, "aimock", filepath.Join(".bin", "llmock"), requireAimockEnv)
	return filepath.Join(dir, "node_modules", ".bin", "llmock")
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// lockedBuffer collects a child process's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startAimock serves fixtures (a path under testdata) on a loopback port with
// no latency and whole-message chunks, and returns its root URL (without
// /v1). The process is killed when the test ends.
func startAimock(t *testing.T, fixtures string) string {
	t.Helper()
	return startAimockPaced(t, fixtures, 0, 4096)
}

// startAimockPaced is startAimock with streamed answers cut into chunks of
// chunkSize characters, latencyMs apart: a slow model, for tests that act
// on a run in flight.
func startAimockPaced(t *testing.T, fixtures string, latencyMs, chunkSize int) string {
	t.Helper()
	bin := aimockBin(t)
	abs, err := filepath.Abs(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		var out lockedBuffer
		cmd := exec.Command(bin, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-f", abs, "-l", strconv.Itoa(latencyMs), "-c", strconv.Itoa(chunkSize), "--log-level", "warn")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting aimock (%s): %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		if waitHealthy(url+"/health", exited, 15*time.Second) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return url
		}
		_ = cmd.Process.Kill()
		<-exited
		// Another process may have taken the port between freePort and
		// the listen; try a new one once.
		if attempt == 1 {
			t.Fatalf("aimock did not answer on %s within 15s; its output:\n%s", url, out.String())
		}
	}
}

// waitHealthy polls url until it answers 200, the process exits, or timeout
// passes.
func waitHealthy(url string, exited <-chan struct{}, timeout time.Duration) bool {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
