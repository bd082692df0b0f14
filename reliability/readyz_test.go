//go:build unix

package reliability

import (
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestReadyzWhileDraining: `dawn start` (with an API key, which probes do
// not send) answers /readyz 200; after SIGTERM, while a run in flight
// finishes, /readyz answers 503 shutting_down so a balancer stops sending
// it requests, and /healthz stays 200; the run then completes and the
// process exits by itself.
func TestReadyzWhileDraining(t *testing.T) {
	dir, env, model := heldApp(t)
	p := startDawn(t, append(env, "DAWN_API_KEY=probe-test-key"), "start", "--app", dir, "--host", "127.0.0.1", "--port", "0", "--grace", "30s")
	c := newClient(p.url)
	defer c.close()
	if r, err := c.do(http.MethodGet, "/readyz", nil); err != nil || r.status != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM = %v %v, want 200", r, err)
	}
	done := make(chan reply, 1)
	go func() {
		r, _ := c.do(http.MethodPost, "/threads/drain/runs/wait", runBody("/held", "Hello"), "Authorization", "Bearer probe-test-key")
		done <- r
	}()
	waitArrived(t, model)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)

	deadline := time.Now().Add(10 * time.Second)
	var r reply
	for {
		var err error
		if r, err = c.do(http.MethodGet, "/readyz", nil); err == nil && r.status == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after SIGTERM with a run in flight = %v %v, want 503; logs:\n%s", r, err, p.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := errorOf(t, r); e.Error.Kind != "shutting_down" {
		t.Errorf("/readyz while draining = %+v, want kind shutting_down", e)
	}
	if h, err := c.do(http.MethodGet, "/healthz", nil); err != nil || h.status != http.StatusOK {
		t.Errorf("/healthz while draining = %v %v, want 200 (the process is alive)", h, err)
	}
	model.free()
	if run := <-done; run.status != http.StatusOK {
		t.Errorf("the run in flight at SIGTERM answered %d %s, want 200", run.status, run.body)
	}
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("dawn start did not exit after its last run; logs:\n%s", p.logs)
	}
}
