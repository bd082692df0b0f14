//go:build unix

package reliability

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/stream"
	_ "modernc.org/sqlite" // the "sqlite" driver, for integrity_check
)

// crashPlanItems is the plan length of the crash app: the offline model
// spends one writeTodos turn per item, so a run has crashPlanItems+1 steps
// and lasts long enough to be killed in the middle.
const crashPlanItems = 20

// crashMaxDelay bounds the random time between firing runs and the kill.
const crashMaxDelay = 80 * time.Millisecond

func crashApp() map[string]string {
	var plan strings.Builder
	for i := 1; i <= crashPlanItems; i++ {
		fmt.Fprintf(&plan, "- [ ] Step %d of the crash plan\n", i)
	}
	return map[string]string{
		"work/agent.md": "---\ndescription: Works through a long plan.\nmax_turns: 40\n---\nWork through the plan one item at a time.\n",
		"work/plan.md":  plan.String(),
	}
}

// crashStats are the test's figures, logged at the end.
type crashStats struct {
	kills, fired, midRun, interrupted, doneButInterrupted int
	checks, newRuns, replays, integrityChecks             int
	// doneButLost counts runs whose client got done but whose final step
	// is not in the thread after the restart.
	doneButLost int
	// replayNoDone counts interrupted runs whose saved events, replayed,
	// end without a done event.
	replayNoDone int
}

// firedRun is one runs/stream the test started before a kill.
type firedRun struct {
	thread string
	fresh  bool   // a thread used in this iteration only
	runID  string // from the Dawn-Run-Id header; empty when none arrived
	status int
	events []stream.Event
	done   bool // the stream delivered its done event
	ended  chan struct{}
}

// TestCrashRecovery starts `dawn start` on a SQLite file, starts runs on
// several threads, kills the process with SIGKILL at a random moment, and
// restarts it, at least 20 times. After every restart each thread must hold
// a completed checkpoint (messages whose tool calls all have results, todos
// a valid list equal to the last writeTodos result), no run may be left
// running (the killed ones are interrupted), the saved events must agree
// with the state, and the thread must accept a new run. Set
// DAWN_CRASH_SEED to replay the kill times of a failed run and
// DAWN_CRASH_KILLS for more kills.
func TestCrashRecovery(t *testing.T) {
	kills := envInt(t, "DAWN_CRASH_KILLS", 20)
	seed := envSeed(t, "DAWN_CRASH_SEED")
	t.Logf("seed %d (rerun with DAWN_CRASH_SEED=%d for the same kill times)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a54))
	dir := writeApp(t, crashApp())
	db := filepath.Join(dir, ".dawn", "dawn.db")
	kept := []string{"kept-a", "kept-b"}
	threads := slices.Clone(kept)
	var st crashStats
	var last []*firedRun
	started := time.Now()
	for i := 0; i < kills; i++ {
		srv := startDawn(t, nil, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		c := newClient(srv.url)
		checkRecovered(t, c, last, &st)
		acceptRuns(t, c, freshThreads(last), &st)

		batch := slices.Clone(kept)
		for j := range 4 {
			id := fmt.Sprintf("k%02d-%d", i, j)
			batch = append(batch, id)
			threads = append(threads, id)
		}
		last = fireRuns(c, batch, kept)
		st.fired += len(last)
		delay := time.Duration(rng.Int64N(int64(crashMaxDelay)))
		time.Sleep(delay)
		srv.kill()
		st.kills++
		c.close()
		waitEnded(t, last)
		for _, f := range last {
			if f.runID != "" && !f.done {
				st.midRun++
			}
		}
		checkIntegrityCopy(t, db, &st)
		if t.Failed() {
			t.Fatalf("kill %d (after %v) failed; seed %d", i+1, delay, seed)
		}
	}

	srv := startDawn(t, nil, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c := newClient(srv.url)
	checkRecovered(t, c, last, &st)
	acceptRuns(t, c, freshThreads(last), &st)
	for _, id := range threads {
		checkThread(t, c, id, nil, &st)
	}
	acceptRuns(t, c, threads, &st)
	c.close()
	if !srv.stop(10 * time.Second) {
		t.Errorf("dawn start did not stop within 10s of SIGTERM")
	}
	checkIntegrity(t, db)
	st.integrityChecks++

	t.Logf("%d kills in %v: %d runs fired, %d killed mid-run (stream without done), %d run records marked interrupted, "+
		"%d thread checks with 0 corrupt threads, %d saved-event replays checked, %d new runs accepted after restarts, %d integrity checks ok; "+
		"%d runs whose client saw done were recorded interrupted (killed between the done event and the run record), %d of them without their final step in the thread; "+
		"%d replays of runs cut off by a kill end without a done event (want 0)",
		st.kills, time.Since(started).Round(time.Millisecond), st.fired, st.midRun, st.interrupted, st.checks, st.replays, st.newRuns, st.integrityChecks, st.doneButInterrupted, st.doneButLost, st.replayNoDone)
	if st.midRun == 0 {
		t.Errorf("no kill landed in the middle of a run (seed %d): the test did not test recovery", seed)
	}
}

// fireRuns starts a runs/stream on each thread and reads each stream on
// its own goroutine until the connection ends.
func fireRuns(c *client, threads, kept []string) []*firedRun {
	out := make([]*firedRun, len(threads))
	for i, id := range threads {
		f := &firedRun{thread: id, fresh: !slices.Contains(kept, id), ended: make(chan struct{})}
		out[i] = f
		go func() {
			defer close(f.ended)
			req, _ := http.NewRequest(http.MethodPost, c.base+"/threads/"+id+"/runs/stream", strings.NewReader(string(runBody("/work", "Work through the plan."))))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.http.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			f.status = resp.StatusCode
			if resp.StatusCode != http.StatusOK {
				return
			}
			f.runID = resp.Header.Get("Dawn-Run-Id")
			f.events, _ = readEvents(resp.Body)
			f.done = len(f.events) > 0 && f.events[len(f.events)-1].Type == stream.TypeDone
		}()
	}
	return out
}

func waitEnded(t *testing.T, fired []*firedRun) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for _, f := range fired {
		select {
		case <-f.ended:
		case <-timeout:
			t.Fatalf("the stream of thread %s did not end within 15s of the kill", f.thread)
		}
	}
}

func freshThreads(fired []*firedRun) []string {
	var out []string
	for _, f := range fired {
		if f.fresh {
			out = append(out, f.thread)
		}
	}
	return out
}

// checkRecovered checks every thread of the runs fired before the last kill.
func checkRecovered(t *testing.T, c *client, fired []*firedRun, st *crashStats) {
	t.Helper()
	for _, f := range fired {
		if f.status != 0 && f.status != http.StatusOK {
			t.Errorf("thread %s: runs/stream answered %d before the kill", f.thread, f.status)
		}
		checkThread(t, c, f.thread, f, st)
	}
}

// checkThread checks one thread after a restart. f is the run fired on it
// before the last kill, or nil.
func checkThread(t *testing.T, c *client, id string, f *firedRun, st *crashStats) {
	t.Helper()
	st.checks++
	r := c.must(t, http.MethodGet, "/threads/"+id, nil)
	if r.status == http.StatusNotFound && f != nil && f.runID == "" {
		return // killed before the request created the thread
	}
	if r.status != http.StatusOK {
		t.Errorf("thread %s: GET answered %d %s", id, r.status, r.body)
		return
	}
	var th struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(r.body, &th)
	if th.Status == "busy" {
		t.Errorf("thread %s is still busy after the restart", id)
	}

	var runs []runRecord
	c.getJSON(t, "/threads/"+id+"/runs", &runs)
	ids := map[string]runRecord{}
	for _, run := range runs {
		ids[run.RunID] = run
		switch run.Status {
		case "running":
			t.Errorf("thread %s: run %s is still running after the restart", id, run.RunID)
		case "interrupted":
			if run.Error == "" {
				t.Errorf("thread %s: interrupted run %s says nothing about why", id, run.RunID)
			}
		}
	}

	var s threadState
	c.getJSON(t, "/threads/"+id+"/state", &s)
	checkState(t, id, s)
	if s.Checkpoint.Step > 0 {
		if _, ok := ids[s.Checkpoint.RunID]; !ok {
			t.Errorf("thread %s: checkpoint names run %q, which is not one of its runs", id, s.Checkpoint.RunID)
		}
	}
	if f == nil || f.runID == "" {
		return
	}
	rec, ok := ids[f.runID]
	switch {
	case !ok:
		t.Errorf("thread %s: run %s, whose stream started, has no record", id, f.runID)
		return
	case rec.Status == "interrupted":
		st.interrupted++
		if f.done {
			// The runner saves the run's end (with its last step) before it
			// publishes done, so a client that saw done must find the run
			// finished and its final answer in the thread.
			st.doneButInterrupted++
			m := s.Values.Messages
			if s.Checkpoint.RunID != f.runID || len(m) == 0 || m[len(m)-1].Role != "assistant" || len(m[len(m)-1].ToolCalls) > 0 {
				st.doneButLost++
			}
			t.Errorf("thread %s: the client saw done for run %s, but the run is recorded interrupted", id, f.runID)
		}
	case rec.Status != "success":
		t.Errorf("thread %s: run %s is %s (%s), want success or interrupted", id, f.runID, rec.Status, rec.Error)
	}
	checkReplay(t, c, id, f, s, st)
}

// checkReplay compares the events saved for the fired run with what its
// client saw and, when the run's step is the thread's latest checkpoint,
// with the state: events and state are saved in one transaction.
func checkReplay(t *testing.T, c *client, id string, f *firedRun, s threadState, st *crashStats) {
	t.Helper()
	r := c.must(t, http.MethodGet, "/threads/"+id+"/runs/"+f.runID+"/stream?after=0", nil)
	if r.status != http.StatusOK {
		t.Errorf("thread %s: replay of run %s answered %d %s", id, f.runID, r.status, r.body)
		return
	}
	st.replays++
	saved, err := readEvents(strings.NewReader(string(r.body)))
	if err != nil {
		t.Errorf("thread %s: replay of run %s does not parse: %v", id, f.runID, err)
		return
	}
	if n := len(saved); !f.done && (n == 0 || saved[n-1].Type != stream.TypeDone) {
		st.replayNoDone++
		t.Errorf("thread %s: the replay of interrupted run %s does not end with done", id, f.runID)
	}
	if n := len(saved); n > 0 && !f.done && strings.Contains(string(saved[n-1].Data), `"interrupted":true`) {
		// The replay of a run a crash cut off ends with a done event the
		// server adds, numbered after the saved events; the client may have
		// seen live events past the last saved one under the same ids.
		saved = saved[:n-1]
	}
	var lastPlan json.RawMessage
	for i, e := range saved {
		if e.ID != int64(i+1) {
			t.Errorf("thread %s: saved event %d of run %s has id %d", id, i, f.runID, e.ID)
			return
		}
		if i < len(f.events) && (f.events[i].Type != e.Type || string(f.events[i].Data) != string(e.Data)) {
			t.Errorf("thread %s: saved event %d of run %s is %s %s, but the client saw %s %s", id, e.ID, f.runID, e.Type, e.Data, f.events[i].Type, f.events[i].Data)
		}
		if e.Type == planning.EventType {
			var p struct {
				Todos json.RawMessage `json:"todos"`
			}
			_ = json.Unmarshal(e.Data, &p)
			lastPlan = p.Todos
		}
	}
	if s.Checkpoint.RunID == f.runID && lastPlan != nil && !sameTodos(lastPlan, s.Values.Todos) {
		t.Errorf("thread %s: the last saved plan_update of run %s is %s, the state's todos %s", id, f.runID, lastPlan, s.Values.Todos)
	}
}

// checkState fails unless the state is one a completed step leaves: every
// assistant tool call answered by tool messages in order, nothing after an
// unanswered call, todos a valid list equal to the last writeTodos result.
func checkState(t *testing.T, id string, s threadState) {
	t.Helper()
	msgs := s.Values.Messages
	if s.Checkpoint.Step == 0 {
		if len(msgs) != 0 {
			t.Errorf("thread %s: step 0 with %d messages", id, len(msgs))
		}
	} else if len(msgs) == 0 || msgs[0].Role != "user" {
		t.Errorf("thread %s: step %d but the messages do not start with the user's", id, s.Checkpoint.Step)
	}
	var want []string // tool call ids still to be answered, in order
	for i, m := range msgs {
		switch {
		case len(want) > 0:
			if m.Role != "tool" || m.ToolCallID != want[0] {
				t.Errorf("thread %s: message %d is %s %q, want the tool result for call %s", id, i, m.Role, m.ToolCallID, want[0])
				return
			}
			want = want[1:]
		case m.Role == "tool":
			t.Errorf("thread %s: message %d is a tool result (%s) no assistant call asked for", id, i, m.ToolCallID)
			return
		case m.Role == "assistant":
			for _, tc := range m.ToolCalls {
				want = append(want, tc.ID)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("thread %s: the messages end with unanswered tool calls %v: a half-written step", id, want)
	}
	if len(msgs) > 0 && msgs[len(msgs)-1].Role == "user" {
		t.Errorf("thread %s: the last message is the user's: its step was not completed", id)
	}

	if s.Checkpoint.Step == 0 && len(s.Values.Todos) == 0 {
		return // a thread whose first step never completed has no state yet
	}
	if _, err := planning.Validate(append(append([]byte(`{"todos":`), s.Values.Todos...), '}')); err != nil {
		t.Errorf("thread %s: todos %s are not a valid list: %v", id, s.Values.Todos, err)
	}
	expected := seedTodos()
	for _, m := range msgs {
		if m.Role == "tool" && m.Name == planning.ToolName && !m.IsError {
			var out struct {
				Todos json.RawMessage `json:"todos"`
			}
			if err := json.Unmarshal([]byte(m.Content), &out); err != nil {
				t.Errorf("thread %s: writeTodos result %q is not JSON", id, m.Content)
				return
			}
			expected = out.Todos
		}
	}
	if !sameTodos(expected, s.Values.Todos) {
		t.Errorf("thread %s: todos %s differ from the last writeTodos result %s", id, s.Values.Todos, expected)
	}
}

// seedTodos is the crash app's plan as a fresh thread holds it.
func seedTodos() json.RawMessage {
	var todos []todo
	for i := 1; i <= crashPlanItems; i++ {
		todos = append(todos, todo{Content: fmt.Sprintf("Step %d of the crash plan", i), Status: "pending"})
	}
	data, _ := json.Marshal(todos)
	return data
}

// acceptRuns runs runs/wait on every thread at once; each must succeed and
// leave a state that ends with the final answer.
func acceptRuns(t *testing.T, c *client, threads []string, st *crashStats) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, len(threads))
	for i, id := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.do(http.MethodPost, "/threads/"+id+"/runs/wait", runBody("/work", "Carry on."))
			switch {
			case err != nil:
				errs[i] = err.Error()
			case r.status != http.StatusOK:
				errs[i] = fmt.Sprintf("%d %s", r.status, r.body)
			}
		}()
	}
	wg.Wait()
	for i, id := range threads {
		if errs[i] != "" {
			t.Errorf("thread %s does not accept a new run after the restart: %s", id, errs[i])
			continue
		}
		st.newRuns++
		var s threadState
		c.getJSON(t, "/threads/"+id+"/state", &s)
		checkState(t, id, s)
		if m := s.Values.Messages; len(m) == 0 || m[len(m)-1].Role != "assistant" || len(m[len(m)-1].ToolCalls) > 0 {
			t.Errorf("thread %s: after a successful run the state does not end with the final answer", id)
		}
	}
}

// checkIntegrityCopy copies the database and its WAL as the kill left them
// and runs integrity_check on the copy, so the server's own recovery on the
// next start sees the files untouched.
func checkIntegrityCopy(t *testing.T, db string, st *crashStats) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(db + suffix)
		if err != nil {
			if suffix == "-wal" && os.IsNotExist(err) {
				continue
			}
			t.Fatalf("reading %s: %v", db+suffix, err)
		}
		if err := os.WriteFile(dst+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkIntegrity(t, dst)
	st.integrityChecks++
}

// checkIntegrity runs PRAGMA integrity_check on the SQLite file at path.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer db.Close()
	var result string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&result); err != nil {
		t.Fatalf("integrity_check on %s: %v", path, err)
	}
	if result != "ok" {
		t.Errorf("integrity_check on %s: %s", path, result)
	}
}
