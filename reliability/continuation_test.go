//go:build unix

package reliability

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// TestCrashContinuation is TestCrashRecovery on an app with runs:
// {continue_orphans: true}: `dawn start` on a SQLite file is killed with
// SIGKILL at random moments while runs work through a long plan, and
// started again, now and then killed again while it continues the runs.
// Every run cut off is continued to success: its replayed log is one run,
// ids 1..N ending with done, and the thread holds a completed state. Set
// DAWN_CRASH_SEED to replay the kill times of a failed run and
// DAWN_CRASH_KILLS for more kills.
func TestCrashContinuation(t *testing.T) {
	kills := envInt(t, "DAWN_CRASH_KILLS", 8)
	seed := envSeed(t, "DAWN_CRASH_SEED")
	t.Logf("seed %d (rerun with DAWN_CRASH_SEED=%d for the same kill times)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0471))
	files := crashApp()
	files["dawn.yaml"] = "runs:\n  continue_orphans: true\n"
	dir := writeApp(t, files)
	// pending are the runs fired and not checked yet. A third of the
	// restarts are killed again at once, while they continue those runs,
	// so that a continuation is itself cut off and continued.
	var pending []*firedRun
	continued, rekilled := 0, 0
	for i := 0; i <= kills; i++ {
		srv := startDawn(t, nil, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		c := newClient(srv.url)
		if i < kills && i > 0 && rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(crashMaxDelay))))
			srv.kill()
			c.close()
			rekilled++
			continue
		}
		for _, f := range pending {
			if checkContinuedRun(t, c, f) {
				continued++
			}
		}
		pending = nil
		if t.Failed() {
			t.Fatalf("after kill %d; seed %d", i, seed)
		}
		if i == kills {
			c.close()
			srv.stop(10 * time.Second)
			break
		}
		var batch []string
		for j := range 4 {
			batch = append(batch, fmt.Sprintf("c%02d-%d", i, j))
		}
		fired := fireRuns(c, batch, nil)
		time.Sleep(time.Duration(rng.Int64N(int64(crashMaxDelay))))
		srv.kill()
		c.close()
		waitEnded(t, fired)
		pending = append(pending, fired...)
	}
	t.Logf("%d kills (%d of them while the restarted server continued the runs): %d runs cut off mid-run were continued to success", kills, rekilled, continued)
	if continued == 0 {
		t.Errorf("no kill landed in the middle of a run (seed %d): the test did not test continuation", seed)
	}
}

// checkContinuedRun follows run f after the restart to its end, from its
// first event, and checks that it ended in success as one run. It reports
// whether the kill had cut the run off (its client saw no done).
func checkContinuedRun(t *testing.T, c *client, f *firedRun) bool {
	t.Helper()
	if f.runID == "" {
		return false // killed before the run started
	}
	r := c.must(t, http.MethodGet, "/threads/"+f.thread+"/runs/"+f.runID+"/stream?after=0", nil)
	if r.status != http.StatusOK {
		t.Errorf("thread %s: rejoining run %s answered %d %s", f.thread, f.runID, r.status, r.body)
		return false
	}
	events, err := readEvents(strings.NewReader(string(r.body)))
	if err != nil || len(events) == 0 {
		t.Errorf("thread %s: the stream of run %s does not parse: %v", f.thread, f.runID, err)
		return false
	}
	for i, e := range events {
		if e.ID != int64(i+1) {
			t.Errorf("thread %s: event %d of run %s has id %d; a continued run's log goes on with the next ids", f.thread, i, f.runID, e.ID)
			return false
		}
	}
	done := events[len(events)-1]
	if done.Type != stream.TypeDone || strings.Contains(string(done.Data), `"error"`) || strings.Contains(string(done.Data), `"interrupted"`) {
		t.Errorf("thread %s: run %s ended with %s %s, want done with the final state", f.thread, f.runID, done.Type, done.Data)
	}
	var runs []runRecord
	c.getJSON(t, "/threads/"+f.thread+"/runs", &runs)
	if i := slices.IndexFunc(runs, func(r runRecord) bool { return r.RunID == f.runID }); i < 0 || runs[i].Status != "success" {
		t.Errorf("thread %s: run %s is recorded as %+v, want success", f.thread, f.runID, runs)
	}
	var s threadState
	c.getJSON(t, "/threads/"+f.thread+"/state", &s)
	checkState(t, f.thread, s)
	if m := s.Values.Messages; len(m) == 0 || m[len(m)-1].Role != "assistant" || len(m[len(m)-1].ToolCalls) > 0 {
		t.Errorf("thread %s: the continued run's state does not end with its final answer", f.thread)
	}
	return !f.done
}
