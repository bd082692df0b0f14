//go:build unix

package reliability

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestPausedReplicaAnswersTheRunsEnd: two `dawn start` replicas with
// runs: {continue_orphans: true} share one Postgres. Replica A is
// SIGSTOPped in the model call of a runs/wait past its lease; replica B
// continues the run and finishes it. A, resumed, finds the run taken over
// when it saves: its caller gets the run's end as B recorded it (200 with
// the answer), not a 5xx for a run that went on.
func TestPausedReplicaAnswersTheRunsEnd(t *testing.T) {
	dsn := pgtest.Database(t)
	dir, env, model := heldApp(t)
	writeFiles(t, dir, map[string]string{"dawn.yaml": "runs:\n  continue_orphans: true\n"})
	reps := startReplicas(t, 2, dir, dsn, env)
	a, b := newClient(reps[0].url), newClient(reps[1].url)
	t.Cleanup(a.close)
	t.Cleanup(b.close)
	logs := func() string {
		return "replica A:\n" + reps[0].logs.String() + "\nreplica B:\n" + reps[1].logs.String()
	}

	answer := make(chan reply, 1)
	go func() {
		r, err := a.do(http.MethodPost, "/threads/paused/runs/wait", runBody("/held", "Hello"))
		if err != nil {
			r = reply{status: -1, body: []byte(err.Error())}
		}
		answer <- r
	}()
	waitArrived(t, model)
	runID := runningRun(t, b, "paused")
	if err := reps[0].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = reps[0].cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)

	waitArrived(t, model) // B continues the run, past A's lease
	model.free()
	deadline := time.Now().Add(30 * time.Second)
	for runStatus(t, b, "paused") != "success" {
		if time.Now().After(deadline) {
			t.Fatalf("replica B did not finish the run it continued within 30s\n%s", logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resume()

	select {
	case r := <-answer:
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "Held answer") {
			t.Errorf("runs/wait on the resumed replica A = %d %s, want 200 with the answer of run %s, which B finished\n%s", r.status, r.body, runID, logs())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("runs/wait on the resumed replica A did not answer within 30s\n%s", logs())
	}
	var runs []runRecord
	a.getJSON(t, "/threads/paused/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "success" {
		t.Errorf("the thread's runs are %+v, want the one run in success", runs)
	}
}
