//go:build unix

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// replicaLease is the lease of the replicas in these tests, so that a
// killed one's runs are recovered within seconds.
const replicaLease = "2s"

// startReplicas starts n `dawn start` processes of the app in dir on the
// Postgres database dsn, as replicas behind a load balancer would run.
func startReplicas(t *testing.T, n int, dir, dsn string, env []string) []*process {
	t.Helper()
	env = append(env, "DAWN_STORE="+dsn, "DAWN_STORE_LEASE="+replicaLease)
	procs := make([]*process, n)
	var wg sync.WaitGroup
	for i := range procs {
		// All at once: their migrations must take turns.
		wg.Go(func() { procs[i] = startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0") })
	}
	wg.Wait()
	return procs
}

// pending is a runs/wait request in flight.
type pending struct {
	replica int
	done    chan reply
}

// TestReplicasShareOnePostgres runs three `dawn start` replicas on one
// Postgres database and checks every guarantee of one process across them:
//   - runs started at once on the same threads through all three: exactly
//     one runs per thread, the others get 409 run_in_flight;
//   - a cancel sent to a replica that does not have the run stops it;
//   - a stream rejoin on another replica follows a live run to its done
//     event, and after the run replays from Last-Event-ID;
//   - a replica killed with SIGKILL mid-run: its run is marked
//     interrupted (at once here: the replicas share a machine, which sees
//     that its process is gone), the run of a live replica is untouched,
//     and every thread takes new runs.
func TestReplicasShareOnePostgres(t *testing.T) {
	dsn := pgtest.Database(t)
	dir, env, model := heldApp(t)
	reps := startReplicas(t, 3, dir, dsn, env)
	c := &replicaSet{t: t, reps: reps, clients: make([]*client, len(reps)), model: model}
	for i, p := range reps {
		c.clients[i] = newClient(p.url)
		defer c.clients[i].close()
	}

	// 1. One run per thread, whichever replica is asked.
	threads := []string{"t0", "t1", "t2", "t3"}
	owner := map[string]*pending{}
	for _, th := range threads {
		owner[th] = c.oneRunPerThread(th)
	}

	// 2. Cancel through a replica that does not have the run.
	for _, th := range threads {
		c.cancelElsewhere(th, owner[th])
	}

	// 3. Placed runs: "live" on replica 0, "doomed" on replica 2, and a
	// follower of the live run on replica 1, from the start.
	p := c.placeRuns()

	// 4. Kill replica 2 mid-run.
	c.killMidRun(p)

	// 5. Let the live run finish: the follower on replica 1 gets every
	// event to done, as replica 0's own replay has them.
	c.finishLive(p)

	// 6. Every thread is valid and takes a new run on any live replica.
	for i, th := range append(threads, "live", "doomed") {
		cl := c.clients[i%2]
		var s threadState
		cl.getJSON(t, "/threads/"+th+"/state", &s)
		if r := cl.must(t, http.MethodPost, "/threads/"+th+"/runs/wait", runBody("/held", "Again")); r.status != http.StatusOK {
			t.Errorf("thread %s: a new run = %d %s, want 200", th, r.status, r.body)
		}
	}
	for _, p := range reps[:2] {
		if !p.stop(10 * time.Second) {
			t.Errorf("a replica did not stop within 10s of SIGTERM")
		}
	}
}

// replicaSet is the three replicas of TestReplicasShareOnePostgres, a
// client for each, and the model that holds their runs.
type replicaSet struct {
	t       *testing.T
	reps    []*process
	clients []*client
	model   *heldModel
}

// oneRunPerThread sends a run on thread th to every replica at once: two
// answer 409 run_in_flight at once, and the one held in its run, which
// every replica lists as the thread's only run, is returned.
func (c *replicaSet) oneRunPerThread(th string) *pending {
	t := c.t
	replies := c.raceRuns(th)
	answered := c.refusals(th, replies, len(replies)-1)
	var owner *pending
	for i, p := range replies {
		if !answered[i] {
			owner = p
		}
	}
	if owner == nil {
		t.Fatalf("thread %s: every request answered; want one held in its run", th)
	}
	waitArrived(t, c.model)
	var runs []runRecord
	c.clients[(owner.replica+1)%3].getJSON(t, "/threads/"+th+"/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("thread %s: runs %+v, want exactly one, running", th, runs)
	}
	return owner
}

// raceRuns posts a runs/wait on thread th to every replica at once.
func (c *replicaSet) raceRuns(th string) []*pending {
	replies := make([]*pending, len(c.clients))
	var started sync.WaitGroup
	for i, cl := range c.clients {
		p := &pending{replica: i, done: make(chan reply, 1)}
		replies[i] = p
		started.Add(1)
		go func() {
			started.Done()
			r, err := cl.do(http.MethodPost, "/threads/"+th+"/runs/wait", runBody("/held", "Hello"))
			if err != nil {
				r = reply{status: -1, body: []byte(err.Error())}
			}
			p.done <- r
		}()
	}
	started.Wait()
	return replies
}

// refusals waits until n of replies have answered, each with 409
// run_in_flight, and marks which ones did.
func (c *replicaSet) refusals(th string, replies []*pending, n int) []bool {
	answered := make([]bool, len(replies))
	for refused := 0; refused < n; {
		progressed := false
		for i, p := range replies {
			if answered[i] {
				continue
			}
			select {
			case r := <-p.done:
				if r.status != http.StatusConflict || errorOf(c.t, r).Error.Kind != "run_in_flight" {
					c.t.Fatalf("thread %s: a second run answered %d %s, want 409 run_in_flight", th, r.status, r.body)
				}
				answered[i] = true
				refused++
				progressed = true
			default:
			}
		}
		if !progressed {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return answered
}

// cancelElsewhere cancels thread th's run through a replica that does not
// have it: Dawn's 200, the run ends, and it is recorded as cancelled.
func (c *replicaSet) cancelElsewhere(th string, owner *pending) {
	t := c.t
	other := c.clients[(owner.replica+1)%3]
	r := other.must(t, http.MethodPost, "/threads/"+th+"/cancel", nil)
	if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"status":"interrupted"`)) {
		t.Fatalf("cancel of thread %s on another replica = %d %s, want Dawn's 200 {thread_id, status: interrupted}", th, r.status, r.body)
	}
	select {
	case <-owner.done:
	case <-time.After(30 * time.Second):
		var runs []runRecord
		other.getJSON(t, "/threads/"+th+"/runs", &runs)
		t.Fatalf("thread %s: the run did not end within 30s of a cancel sent to another replica; runs %+v; the run's replica %d logged:\n%s",
			th, runs, owner.replica, c.reps[owner.replica].logs)
	}
	var runs []runRecord
	other.getJSON(t, "/threads/"+th+"/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "cancelled" {
		t.Errorf("thread %s after the cancel: runs %+v, want one cancelled", th, runs)
	}
}

// placedRuns are the runs of phases 3 to 5: "live" streamed on replica 0
// and followed on replica 1, "doomed" waited on replica 2.
type placedRuns struct {
	live, followed     chan []stream.Event
	doomed             <-chan reply
	liveRun, doomedRun string
}

// placeRuns starts the live and doomed runs, held by the model, and a
// follower of the live run on replica 1 from its start.
func (c *replicaSet) placeRuns() placedRuns {
	t := c.t
	p := placedRuns{live: make(chan []stream.Event, 1), followed: make(chan []stream.Event, 1)}
	go func() {
		events, _ := postStream(c.clients[0], "/threads/live/runs/stream", runBody("/held", "Hello"))
		p.live <- events
	}()
	waitArrived(t, c.model)
	p.doomed = startHeld(t, c.clients[2], "doomed")
	waitArrived(t, c.model)
	p.liveRun = runningRun(t, c.clients[1], "live")
	p.doomedRun = runningRun(t, c.clients[1], "doomed")
	go func() {
		events, _ := streamEvents(c.clients[1], "/threads/live/runs/"+p.liveRun+"/stream", 0)
		p.followed <- events
	}()
	return p
}

// killMidRun kills replica 2 with SIGKILL: its run is interrupted once a
// live replica looks (it sees that the process on this machine is gone, or
// else its lease expires), the live run is untouched, the
// runs/wait on it is cut, and its stream rejoined elsewhere ends
// interrupted.
func (c *replicaSet) killMidRun(p placedRuns) {
	t := c.t
	c.reps[2].kill()
	deadline := time.Now().Add(30 * time.Second)
	for runStatus(t, c.clients[1], "doomed") == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("the killed replica's run was not marked interrupted within 30s; replica 1's log:\n%s", c.reps[1].logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := runStatus(t, c.clients[0], "doomed"); st != "interrupted" {
		t.Errorf("the killed replica's run is %s, want interrupted", st)
	}
	if st := runStatus(t, c.clients[0], "live"); st != "running" {
		t.Errorf("the live replica's run is %s after the recovery, want running", st)
	}
	if r := <-p.doomed; r.status != -1 {
		t.Errorf("runs/wait on the killed replica answered %d %s, want its connection cut", r.status, r.body)
	}
	// Its stream, rejoined on another replica, ends as interrupted.
	ended, err := streamEvents(c.clients[0], "/threads/doomed/runs/"+p.doomedRun+"/stream", 0)
	if err != nil || len(ended) == 0 || ended[len(ended)-1].Type != stream.TypeDone || !bytes.Contains(ended[len(ended)-1].Data, []byte(`"interrupted":true`)) {
		t.Errorf("rejoin of the killed replica's run: %v (%v), want it to end with an interrupted done", eventTypes(ended), err)
	}
}

// finishLive frees the live run: its own stream, the follower on
// replica 1 and replica 0's replay have the same events to done, and a
// rejoin from the middle on replica 1 gets the rest.
func (c *replicaSet) finishLive(p placedRuns) {
	t := c.t
	c.model.free()
	first := <-p.live
	if len(first) == 0 || first[len(first)-1].Type != stream.TypeDone {
		t.Fatalf("the live run's own stream: %v, want events ending with done", eventTypes(first))
	}
	var got []stream.Event
	select {
	case got = <-p.followed:
	case <-time.After(30 * time.Second):
		t.Fatal("the follower on another replica did not end within 30s of the run")
	}
	want, err := streamEvents(c.clients[0], "/threads/live/runs/"+p.liveRun+"/stream", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || want[len(want)-1].Type != stream.TypeDone {
		t.Fatalf("replay on the run's replica: %v, want events ending with done", eventTypes(want))
	}
	if !sameEvents(first, want) {
		t.Errorf("the live stream had %v, the replay %v", eventTypes(first), eventTypes(want))
	}
	if !sameEvents(got, want) {
		t.Errorf("follower on another replica got %v, the run's replica replays %v", eventTypes(got), eventTypes(want))
	}
	// After the run, from the middle, on another replica.
	if len(want) < 2 {
		t.Fatalf("the live run has %d events, want at least 2 to rejoin in the middle", len(want))
	}
	mid := want[len(want)/2-1].ID
	tail, err := streamEvents(c.clients[1], "/threads/live/runs/"+p.liveRun+"/stream", mid)
	if err != nil || !sameEvents(tail, want[len(want)/2:]) {
		t.Errorf("rejoin after %d on another replica: %v (%v), want %v", mid, eventTypes(tail), err, eventTypes(want[len(want)/2:]))
	}
}

// startHeld starts a runs/wait on thread th and returns its answer's
// channel.
func startHeld(t *testing.T, c *client, th string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		r, err := c.do(http.MethodPost, "/threads/"+th+"/runs/wait", runBody("/held", "Hello"))
		if err != nil {
			r = reply{status: -1, body: []byte(err.Error())}
		}
		out <- r
	}()
	return out
}

// postStream POSTs a runs/stream request and reads its events to the end.
func postStream(c *client, path string, body []byte) ([]stream.Event, error) {
	req, err := http.NewRequest(http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %d", path, resp.StatusCode)
	}
	return readEvents(resp.Body)
}

// runningRun returns the id of the thread's one run, which must be running.
func runningRun(t *testing.T, c *client, th string) string {
	t.Helper()
	var runs []runRecord
	c.getJSON(t, "/threads/"+th+"/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("thread %s: runs %+v, want one running", th, runs)
	}
	return runs[0].RunID
}

// runStatus is the status of the thread's latest run.
func runStatus(t *testing.T, c *client, th string) string {
	t.Helper()
	var runs []runRecord
	c.getJSON(t, "/threads/"+th+"/runs", &runs)
	if len(runs) == 0 {
		t.Fatalf("thread %s has no runs", th)
	}
	return runs[0].Status
}

// streamEvents GETs a run's stream after the event id after and reads it
// to its end.
func streamEvents(c *client, path string, after int64) ([]stream.Event, error) {
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Last-Event-ID", fmt.Sprint(after))
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d", path, resp.StatusCode)
	}
	return readEvents(resp.Body)
}

func eventTypes(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d:%s", e.ID, e.Type)
	}
	return out
}

// sameEvents compares ids, types and data (as JSON values).
func sameEvents(a, b []stream.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Type != b[i].Type {
			return false
		}
		var x, y any
		if json.Unmarshal(a[i].Data, &x) != nil || json.Unmarshal(b[i].Data, &y) != nil || !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
