//go:build unix

package reliability

import (
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestRestartEndsKilledRunsOnPostgres: `dawn start` on Postgres, with a
// lease far longer than the test, is killed with SIGKILL while it holds a
// run, and started again on the same machine. The new process knows the
// old one is gone (same machine and pid namespace, its pid no longer the
// process that registered), so the killed run is interrupted at once and
// the thread takes a new run, as on SQLite, without waiting for the lease.
func TestRestartEndsKilledRunsOnPostgres(t *testing.T) {
	dsn := pgtest.Database(t)
	dir, env, model := heldApp(t)
	env = append(env, "DAWN_STORE="+dsn, "DAWN_STORE_LEASE=10m")
	first := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c := newClient(first.url)
	go func() { _, _ = c.do(http.MethodPost, "/threads/restart/runs/wait", runBody("/held", "Hello")) }()
	waitArrived(t, model)
	runningRun(t, c, "restart")
	first.kill()
	c.close()

	second := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c = newClient(second.url)
	defer c.close()
	var runs []runRecord
	c.getJSON(t, "/threads/restart/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "interrupted" {
		t.Errorf("after the restart the killed run is %+v, want interrupted at once (the lease is 10m)", runs)
	}
	model.free()
	if r := c.must(t, http.MethodPost, "/threads/restart/runs/wait", runBody("/held", "Again")); r.status != http.StatusOK {
		t.Errorf("a new run on the thread after the restart = %d %s, want 200", r.status, r.body)
	}
}
