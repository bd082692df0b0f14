//go:build unix

package reliability

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// slowTurns is how many writeTodos turns the slow model takes before its
// answer, and slowDelay how long each of its replies takes: a run has
// slowTurns+1 steps and lasts about (slowTurns+1)*slowDelay.
const (
	slowTurns = 3
	slowDelay = 250 * time.Millisecond
)

// slowModel is an OpenAI-compatible model that answers after slowDelay: it
// ticks the crash plan's items one writeTodos call at a time, then answers.
type slowModel struct{ calls atomic.Int64 }

func (m *slowModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.calls.Add(1)
	var body struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &body)
	done := 0
	for _, msg := range body.Messages {
		if msg.Role == "tool" {
			done++
		}
	}
	select {
	case <-time.After(slowDelay):
	case <-r.Context().Done():
		return
	}
	delta := map[string]any{"role": "assistant", "content": "Slow answer"}
	finish := "stop"
	if done < slowTurns {
		todos := make([]todo, crashPlanItems)
		for i := range todos {
			todos[i] = todo{Content: fmt.Sprintf("Step %d of the crash plan", i+1), Status: "pending"}
			if i <= done {
				todos[i].Status = "completed"
			}
		}
		args, _ := json.Marshal(map[string]any{"todos": todos})
		call := map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", done), "type": "function", "function": map[string]any{"name": "writeTodos", "arguments": string(args)}}
		delta = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{call}}
		finish = "tool_calls"
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-slow",
			"choices": []any{map[string]any{"index": 0, "message": delta, "finish_reason": finish}}})
		return
	}
	chunk, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-slow",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
}

// slowApp is the crash plan's route on the slow model.
func slowApp(t *testing.T) (dir string, env []string) {
	m := &slowModel{}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	files := crashApp()
	files["work/agent.md"] = "---\ndescription: Works through a long plan slowly.\nmodel: openai:gpt-slow\nmax_turns: 40\n---\nWork through the plan one item at a time.\n"
	return writeApp(t, files), []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
}

// drainDelay is how long a replica is out of the rotation before its
// SIGTERM: a few of HAProxy's check intervals.
const drainDelay = time.Second

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// balancer is HAProxy in front of three `dawn start` replicas on one
// Postgres database, with its runtime API on a unix socket.
type balancer struct {
	t      *testing.T
	dir    string
	env    []string
	ports  []int
	reps   []*process
	socket string
	client *client
	proc   *exec.Cmd
	logs   *logBuffer
}

// haproxyConfig is round robin without stickiness; a replica leaves the
// rotation while /readyz fails; a request whose connection a replica
// refused (it is down) is sent to another one. Each answer names the
// replica that gave it in a Dawn-Replica header.
const haproxyConfig = `global
    stats socket %s mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 2m
    timeout server 2m
    retries 3
    option redispatch
    retry-on conn-failure

frontend api
    bind 127.0.0.1:%d
    default_backend dawn

backend dawn
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fall 1 rise 1
    http-response set-header Dawn-Replica %%s
`

// startBalancer starts the replicas and HAProxy, or skips the test when
// haproxy is not installed (unless DAWN_REQUIRE_HAPROXY=1).
func startBalancer(t *testing.T) *balancer {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("DAWN_REQUIRE_HAPROXY") == "1" {
			t.Fatal("haproxy is not installed and DAWN_REQUIRE_HAPROXY=1: install Debian's haproxy package")
		}
		t.Skip("haproxy is not installed (Debian's haproxy package); set DAWN_REQUIRE_HAPROXY=1 to fail instead")
	}
	dsn := pgtest.Database(t)
	dir, env := slowApp(t)
	b := &balancer{t: t, dir: dir, env: append(env, "DAWN_STORE="+dsn, "DAWN_STORE_LEASE="+replicaLease), logs: &logBuffer{}}
	tmp := t.TempDir()
	b.socket = filepath.Join(tmp, "admin.sock")
	lbPort := freePort(t)
	cfg := fmt.Sprintf(haproxyConfig, b.socket, lbPort)
	b.reps = make([]*process, 3)
	for i := range b.reps {
		b.ports = append(b.ports, freePort(t))
		cfg += fmt.Sprintf("    server r%d 127.0.0.1:%d check\n", i, b.ports[i])
	}
	var wg sync.WaitGroup
	for i := range b.reps {
		wg.Go(func() { b.start(i) })
	}
	wg.Wait()
	path := filepath.Join(tmp, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	b.proc = exec.Command(bin, "-db", "-f", path)
	b.proc.Stdout, b.proc.Stderr = b.logs, b.logs
	if err := b.proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.proc.Process.Kill(); _ = b.proc.Wait() })
	b.client = newClient(fmt.Sprintf("http://127.0.0.1:%d", lbPort))
	t.Cleanup(b.client.close)
	b.waitUp()
	return b
}

// start starts replica i on its port.
func (b *balancer) start(i int) {
	b.reps[i] = startDawn(b.t, b.env, "start", "--app", b.dir, "--host", "127.0.0.1", "--port", strconv.Itoa(b.ports[i]), "--grace", "20s")
}

// waitUp waits until HAProxy sees every replica up.
func (b *balancer) waitUp() {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := b.admin("show servers state dawn")
		if err == nil && b.upCount(out) == 3 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("HAProxy does not see three replicas up within 20s: %v\n%s\nhaproxy's output:\n%s", err, out, b.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upCount counts the servers of "show servers state" whose operational
// state is 2 (running).
func (b *balancer) upCount(state string) int {
	n := 0
	for _, line := range strings.Split(state, "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && !strings.HasPrefix(line, "#") && f[5] == "2" {
			n++
		}
	}
	return n
}

// admin sends one command to HAProxy's runtime API.
func (b *balancer) admin(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", b.socket, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintln(c, cmd); err != nil {
		return "", err
	}
	data, err := io.ReadAll(bufio.NewReader(c))
	return string(data), err
}

// outcome is what a client saw of one run through the balancer.
type outcome struct {
	thread, runID string
	stream        bool
	status        int // -1: the connection broke
	done          bool
	lastID        int64
	err           string // what broke, when status is -1
}

// fire runs one run on a fresh thread through the balancer: runs/wait, or
// runs/stream read to its end.
func (b *balancer) fire(thread string, useStream bool) outcome {
	o := outcome{thread: thread, stream: useStream, status: -1}
	path := "/threads/" + thread + "/runs/wait"
	if useStream {
		path = "/threads/" + thread + "/runs/stream"
	}
	req, _ := http.NewRequest(http.MethodPost, b.client.base+path, strings.NewReader(string(runBody("/work", "Work"))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.http.Do(req)
	if err != nil {
		o.err = err.Error()
		return o
	}
	defer resp.Body.Close()
	o.status, o.runID = resp.StatusCode, resp.Header.Get("Dawn-Run-Id")
	if !useStream || resp.StatusCode != http.StatusOK {
		_, err := io.ReadAll(resp.Body)
		o.done = err == nil && resp.StatusCode == http.StatusOK
		if err != nil {
			o.status, o.err = -1, err.Error()
		}
		return o
	}
	events, err := readEvents(resp.Body)
	if len(events) > 0 {
		o.lastID = events[len(events)-1].ID
		o.done = events[len(events)-1].Type == stream.TypeDone
	}
	if err != nil || !o.done {
		o.status, o.err = -1, fmt.Sprintf("the stream ended after %v: %v", eventTypes(events), err)
	}
	return o
}

// lbFigures are the test's figures, logged at the end.
type lbFigures struct {
	runs, completed, interrupted, kills, restarts, rejoins int
	killedInFlight                                         int // 5xx or cut responses of the killed replica's runs
	errors                                                 []string
}

func (f *lbFigures) fail(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

// settle waits for the thread's run to end and checks what the client saw
// against it: a run that completed was answered 200 with its done event; a
// run that was interrupted (its replica was killed) has its committed
// steps intact, and a stream rejoined through the balancer with
// Last-Event-ID follows it to its done event. killed says whether a
// replica was killed while the run was in flight.
func (b *balancer) settle(o outcome, f *lbFigures, killed bool) {
	t := b.t
	var runs []runRecord
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := b.client.must(t, http.MethodGet, "/threads/"+o.thread+"/runs", nil)
		if r.status != http.StatusOK || json.Unmarshal(r.body, &runs) != nil {
			f.fail("thread %s (client saw status %d): GET its runs answered %d %s", o.thread, o.status, r.status, r.body)
			return
		}
		if len(runs) == 1 && runs[0].Status != "running" {
			break
		}
		if time.Now().After(deadline) || len(runs) > 1 {
			f.fail("thread %s: runs %+v, want one that ended", o.thread, runs)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.runs++
	switch run := runs[0]; {
	case run.Status == "success" && o.done && o.status == http.StatusOK:
		f.completed++
	case run.Status == "interrupted" && killed:
		f.interrupted++
		if o.status == -1 || o.status >= 500 {
			f.killedInFlight++
		}
		var s threadState
		b.client.getJSON(t, "/threads/"+o.thread+"/state", &s)
		checkState(t, o.thread, s)
		if o.stream && o.runID != "" {
			events, err := streamEvents(b.client, "/threads/"+o.thread+"/runs/"+o.runID+"/stream", o.lastID)
			if err != nil || len(events) == 0 || events[len(events)-1].Type != stream.TypeDone {
				f.fail("thread %s: the rejoined stream after event %d: %v (%v), want it to end with done", o.thread, o.lastID, eventTypes(events), err)
			} else {
				f.rejoins++
			}
		}
	default:
		f.fail("thread %s: run %s ended %s (%s) while its client saw status %d done=%v (killed=%v)", o.thread, run.RunID, run.Status, run.Error, o.status, o.done, killed)
	}
}

// fireMany runs n runs at once on fresh threads named prefix-i, half
// through runs/wait and half through runs/stream.
func (b *balancer) fireMany(prefix string, n int) []outcome {
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i] = b.fire(fmt.Sprintf("%s-%d", prefix, i), i%2 == 1) })
	}
	wg.Wait()
	return out
}

// TestBehindHAProxy runs three `dawn start` replicas on one Postgres
// database behind HAProxy (round robin, no stickiness, /readyz checks) and
// drives it with real clients through the balancer:
//   - runs/wait and runs/stream, and a stream rejoined with Last-Event-ID
//     (on whichever replica the balancer picks) follows its run to done;
//   - SIGKILL of one replica mid-run: each run completes, or is interrupted
//     with its committed steps intact and its stream rejoinable; only the
//     killed replica's in-flight responses fail;
//   - a rolling restart of all three (taken out of the rotation, SIGTERM,
//     started again) under load: every run completes and no answer is 5xx.
func TestBehindHAProxy(t *testing.T) {
	b := startBalancer(t)
	f := &lbFigures{}
	defer func() {
		t.Logf("behind HAProxy: %d runs (%d completed, %d interrupted by the kill), %d kills, %d restarts, %d stream rejoins, %d failed responses of the killed replica's runs, %d errors",
			f.runs, f.completed, f.interrupted, f.kills, f.restarts, f.rejoins, f.killedInFlight, len(f.errors))
		for _, e := range f.errors {
			t.Error(e)
		}
	}()

	for _, o := range b.fireMany("warm", 6) {
		b.settle(o, f, false)
	}
	b.rejoinLive(f)
	b.killOne(f)
	b.rollingRestart(f)
}

// rejoinLive starts a stream, drops it after its first event and rejoins
// through the balancer with Last-Event-ID: the rest arrives, to done, with
// no event twice.
func (b *balancer) rejoinLive(f *lbFigures) {
	t := b.t
	req, _ := http.NewRequest(http.MethodPost, b.client.base+"/threads/rejoin/runs/stream", strings.NewReader(string(runBody("/work", "Work"))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.http.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream through the balancer: %v %v", resp, err)
	}
	runID := resp.Header.Get("Dawn-Run-Id")
	first, err := readFirstEvent(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the stream's first event: %v", err)
	}
	events, err := streamEvents(b.client, "/threads/rejoin/runs/"+runID+"/stream", first)
	if err != nil || len(events) == 0 || events[0].ID != first+1 || events[len(events)-1].Type != stream.TypeDone {
		f.fail("stream rejoined after event %d through the balancer: %v (%v), want the rest to done", first, eventTypes(events), err)
		return
	}
	f.rejoins++
	b.settle(outcome{thread: "rejoin", runID: runID, stream: true, status: http.StatusOK, done: true}, f, false)
}

// readFirstEvent reads an SSE body until its first event's id.
func readFirstEvent(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("the stream ended before an event with an id")
}

// killOne fires runs, SIGKILLs replica 0 while they are in flight, starts
// it again, and settles every run.
func (b *balancer) killOne(f *lbFigures) {
	results := make(chan []outcome, 1)
	go func() { results <- b.fireMany("kill", 9) }()
	time.Sleep(slowDelay + slowDelay/2) // every run past its first step
	b.reps[0].kill()
	f.kills++
	b.start(0)
	f.restarts++
	b.waitUp()
	for _, o := range <-results {
		b.settle(o, f, true)
	}
}

// rollingRestart restarts the replicas one at a time under a small load:
// each is taken out of HAProxy's rotation, gets SIGTERM drainDelay later, finishes its runs
// and is started again. No run may fail and no answer may be a 5xx.
func (b *balancer) rollingRestart(f *lbFigures) {
	t := b.t
	stop := make(chan struct{})
	var mu sync.Mutex
	var fired []outcome
	var load sync.WaitGroup
	for w := range 3 {
		load.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := b.fire(fmt.Sprintf("roll-%d-%d", w, i), (w+i)%2 == 1)
				mu.Lock()
				fired = append(fired, o)
				mu.Unlock()
			}
		})
	}
	for i := range b.reps {
		if out, err := b.admin(fmt.Sprintf("set server dawn/r%d state maint", i)); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("taking r%d out of the rotation: %q %v", i, out, err)
		}
		// As a preStop hook would: let requests HAProxy sent before the
		// replica left the rotation arrive before it closes its idle
		// connections on SIGTERM.
		time.Sleep(drainDelay)
		if !b.reps[i].stop(30 * time.Second) {
			f.fail("replica %d did not stop within 30s of SIGTERM", i)
		}
		b.start(i)
		f.restarts++
		if _, err := b.admin(fmt.Sprintf("set server dawn/r%d state ready", i)); err != nil {
			t.Fatal(err)
		}
		b.waitUp()
		// Some runs on the restarted replica's turn in the rotation.
		mu.Lock()
		want := len(fired) + 3
		mu.Unlock()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			n := len(fired)
			mu.Unlock()
			if n >= want {
				break
			}
		}
	}
	close(stop)
	load.Wait()
	for _, o := range fired {
		if o.status != http.StatusOK {
			f.fail("thread %s during the rolling restart: status %d (%s), want 200", o.thread, o.status, o.err)
		}
		b.settle(o, f, false)
	}
}
