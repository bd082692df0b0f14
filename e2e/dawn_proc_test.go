package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// buildDawn builds the stock binary (./cmd/dawn), once per test binary.
func buildDawn(t *testing.T) string {
	t.Helper()
	return built(t, "cmd/dawn")
}

// startDawn runs `dawn start` on the app folder on a free loopback port with
// env added to the process environment, and returns the URL from its
// "dawn server ready" log line. The server gets SIGTERM when the test ends.
func startDawn(t *testing.T, bin, appDir string, env ...string) string {
	t.Helper()
	url, _ := launchDawn(t, bin, appDir, env...)
	return url
}

// launchDawn is startDawn that also returns kill, which SIGKILLs the server
// and waits for it to exit, as a crash would end it.
func launchDawn(t *testing.T, bin, appDir string, env ...string) (url string, kill func()) {
	t.Helper()
	cmd := exec.Command(bin, "start", "--app", appDir, "--host", "127.0.0.1", "--port", "0")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cmd.Stdout = &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			var line struct {
				URL string `json:"url"`
			}
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.URL != "" {
				urls <- line.URL
				sent = true
			}
		}
		_, _ = io.Copy(&logs, stderr)
		_ = cmd.Wait()
		close(exited)
	}()
	kill = func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("dawn start did not stop within 10s of SIGTERM; its logs:\n%s", logs.String())
		}
	})
	select {
	case url := <-urls:
		return url, kill
	case <-exited:
		t.Fatalf("dawn start exited before it was ready; its logs:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("dawn start printed no ready line with a url within 30s; its logs:\n%s", logs.String())
	}
	return "", kill
}
