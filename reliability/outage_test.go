//go:build unix

package reliability

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// outageLease is the replicas' lease in TestPostgresOutageSparesLiveRuns.
const outageLease = 3 * time.Second

// TestPostgresOutageSparesLiveRuns: two `dawn start` replicas share one
// Postgres, each through a TCP proxy whose link the test cuts, with a run
// held inside its model call on each. Both links are cut for longer than
// the lease, as a database failover does; while cut, the replicas answer
// 503 store_unavailable without naming the database. Then B's link comes
// back, and A's a moment later: B must not take A's run for orphaned (A had
// no lease term to renew), and both runs, let go once A has renewed,
// finish with the model's answer.
func TestPostgresOutageSparesLiveRuns(t *testing.T) {
	db := pgtest.Database(t)
	dir, env, model := heldApp(t)
	env = append(env, "DAWN_STORE_LEASE="+outageLease.String())
	var proxies [2]*pgtest.Proxy
	var reps [2]*process
	var clients [2]*client
	for i := range reps {
		p, dsn := pgtest.NewProxy(t, db)
		proxies[i] = p
		reps[i] = startDawn(t, append(env, "DAWN_STORE="+dsn), "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		clients[i] = newClient(reps[i].url)
		defer clients[i].close()
	}
	a, b := clients[0], clients[1]
	heldA := startHeld(t, a, "on-a")
	waitArrived(t, model)
	heldB := startHeld(t, b, "on-b")
	waitArrived(t, model)

	// The outage: both links cut for one and a half leases.
	proxies[0].Cut()
	proxies[1].Cut()
	r := b.must(t, http.MethodGet, "/threads/on-a", nil)
	if e := errorOf(t, r); r.status != http.StatusServiceUnavailable || e.Error.Kind != "store_unavailable" || r.header.Get("Retry-After") == "" {
		t.Errorf("GET /threads/on-a with the store cut off = %d %s (Retry-After %q), want 503 store_unavailable with Retry-After",
			r.status, r.body, r.header.Get("Retry-After"))
	}
	for _, word := range []string{"postgres", "user=", "127.0.0.1", "connection"} {
		if strings.Contains(string(r.body), word) {
			t.Errorf("the 503 names the database (%q): %s", word, r.body)
		}
	}
	time.Sleep(outageLease * 3 / 2)

	// B is back first; A a third of a lease later.
	proxies[1].Restore()
	time.Sleep(outageLease / 3)
	proxies[0].Restore()
	// A full lease after B is back: B has looked for gone owners several
	// times, and A has renewed.
	time.Sleep(outageLease + outageLease/3)
	for th, c := range map[string]*client{"on-a": b, "on-b": a} {
		if st := runStatus(t, c, th); st != "running" {
			t.Errorf("thread %s's run is %s after the outage, want running: a run that could not renew during an outage is not an orphan", th, st)
		}
	}
	model.free()
	for name, held := range map[string]<-chan reply{"A": heldA, "B": heldB} {
		select {
		case r := <-held:
			if r.status != http.StatusOK || !strings.Contains(string(r.body), "Held answer") {
				t.Errorf("the run held on replica %s answered %d %s, want 200 with the model's answer", name, r.status, r.body)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the run held on replica %s did not end within 30s", name)
		}
	}
	if t.Failed() {
		t.Logf("replica A's log:\n%s\nreplica B's log:\n%s", reps[0].logs, reps[1].logs)
	}
	if !strings.Contains(reps[1].logs.String(), "store_unavailable") && !strings.Contains(reps[1].logs.String(), "request failed") {
		t.Errorf("replica B's log has no record of the failed request's details:\n%s", reps[1].logs)
	}
}
