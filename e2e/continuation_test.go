package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// The tests here SIGKILL the server running a run, on an app with
// runs: {continue_orphans: true}, and check that a live server (another
// replica on Postgres, or the same one restarted on SQLite) continues the
// run from its last committed step. The server is goapp, whose tools
// charge (not idempotent) and refresh (idempotent) log each run to a file
// and never return the first time; the model is aimock.

// continuationApp writes an app with continue_orphans and the route /desk,
// whose calls need no approval, and returns it with the calls log.
func continuationApp(t *testing.T) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(t.TempDir(), "calls.log")
	writeFile(t, filepath.Join(dir, "dawn.yaml"), "runs:\n  continue_orphans: true\n")
	writeFile(t, filepath.Join(dir, "desk", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou help.\n")
	return dir, calls
}

// cutRun is a run the test follows on the server that dies: its id and
// the last event id the client saw.
type cutRun struct {
	thread, run string
	last        int64
	seen        []stream.Event
}

// startCut starts a streamed run of message on thread and reads its events
// until the tool_call of tool, which the server commits before the tool
// runs. The rest of the stream is left unread: the server dies meanwhile.
func startCut(t *testing.T, url, thread, message, tool string) *cutRun {
	t.Helper()
	resp := postJSON(t, url+"/threads/"+thread+"/runs/stream", userRun("/desk", message))
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream on %s: %d", thread, resp.StatusCode)
	}
	c := &cutRun{thread: thread, run: resp.Header.Get("Dawn-Run-Id")}
	r := stream.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("%s: the stream ended before the %s call: %v (events %v)", thread, tool, err, eventTypes(c.seen))
		}
		c.seen, c.last = append(c.seen, e), e.ID
		var d struct {
			Name string `json:"name"`
		}
		if e.Type == stream.TypeToolCall && json.Unmarshal(e.Data, &d) == nil && d.Name == tool {
			return c
		}
	}
}

// rejoin follows c's run on url from the last event the client saw
// (Last-Event-ID) to its done event. The run may not have been taken over
// yet: the stream then waits for it.
func rejoin(t *testing.T, url string, c *cutRun) []stream.Event {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/threads/"+c.thread+"/runs/"+c.run+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", strconv.FormatInt(c.last, 10))
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readEvents(t, resp)
}

// checkContinued checks the events a client rejoined with got: they
// follow the last one it saw with the next id, carry the cut-off call's
// result, and end with done and the answer.
func checkContinued(t *testing.T, c *cutRun, got []stream.Event, tool, answer string) stream.Event {
	t.Helper()
	if got[0].ID != c.last+1 {
		t.Fatalf("%s: the rejoined stream starts at event %d, want %d right after the last one seen", c.thread, got[0].ID, c.last+1)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID != got[i-1].ID+1 {
			t.Fatalf("%s: event ids jump from %d to %d", c.thread, got[i-1].ID, got[i].ID)
		}
	}
	if last := got[len(got)-1]; last.Type != stream.TypeDone || strings.Contains(string(last.Data), `"interrupted"`) {
		t.Fatalf("%s: the continued run ended with %s %s, want done with its answer", c.thread, last.Type, last.Data)
	}
	if a := lastAnswer(t, got); a != answer {
		t.Fatalf("%s: the continued run answered %q, want %q (events %v)", c.thread, a, answer, eventTypes(got))
	}
	return findToolResult(t, got, tool)
}

// findToolResult returns the one tool_result event of tool in events.
func findToolResult(t *testing.T, events []stream.Event, tool string) stream.Event {
	t.Helper()
	var found []stream.Event
	for _, e := range events {
		var d struct {
			Name string `json:"name"`
		}
		if e.Type == stream.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Name == tool {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d tool_result events for %s, want 1: %v", len(found), tool, eventTypes(events))
	}
	return found[0]
}

// messageRoles lists the roles of a thread's messages, with the tool
// calls' names, as GET /threads/:id/state shows them.
func messageRoles(t *testing.T, url, thread string) []string {
	t.Helper()
	resp, err := http.Get(url + "/threads/" + thread + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Values struct {
			Messages []struct {
				Role      string `json:"role"`
				ToolCalls []struct {
					Name string `json:"name"`
				} `json:"tool_calls"`
			} `json:"messages"`
		} `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range st.Values.Messages {
		role := m.Role
		for _, c := range m.ToolCalls {
			role += ":" + c.Name
		}
		out = append(out, role)
	}
	return out
}

// testContinuation drives both cut-off runs: start is the server that
// dies; survivor returns the server that continues the runs, once start
// is dead.
func testContinuation(t *testing.T, calls, start string, kill func(), survivor func() string) {
	charge := startCut(t, start, "t-charge", "Use charge", "charge")
	refresh := startCut(t, start, "t-refresh", "Use refresh", "refresh")
	waitCalls(t, calls, 2) // both tools run, and never return
	kill()
	url := survivor()

	got := checkContinued(t, charge, rejoin(t, url, charge), "charge", "The charge may or may not have gone through; I will check before charging again.")
	if !strings.Contains(string(got.Data), `"outcome":"unknown"`) {
		t.Errorf("the cut-off charge reached the client as %s, want outcome unknown", got.Data)
	}
	got = checkContinued(t, refresh, rejoin(t, url, refresh), "refresh", "Refreshed the cache.")
	if !strings.Contains(string(got.Data), "applied k1 (run 2)") {
		t.Errorf("the cut-off refresh (idempotent) reached the client as %s, want its second run's result", got.Data)
	}
	lines := callLines(t, calls)
	if n := strings.Count(strings.Join(lines, "\n"), "charge k1"); n != 1 {
		t.Errorf("charge ran %d times (%v); a started call that is not idempotent must not run again", n, lines)
	}
	if n := strings.Count(strings.Join(lines, "\n"), "refresh k1"); n != 2 {
		t.Errorf("refresh ran %d times (%v), want 2: an idempotent call runs again", n, lines)
	}

	// A run without the crash gives the same answer and the same
	// conversation.
	plain := readEvents(t, postJSON(t, url+"/threads/t-plain/runs/stream", userRun("/desk", "Use refresh")))
	if a := lastAnswer(t, plain); a != "Refreshed the cache." {
		t.Fatalf("the run without a crash answered %q", a)
	}
	if a, b := messageRoles(t, url, "t-refresh"), messageRoles(t, url, "t-plain"); !slices.Equal(a, b) {
		t.Errorf("the continued thread holds %v, the thread without a crash %v; want the same conversation", a, b)
	}
	if roles := messageRoles(t, url, "t-charge"); !slices.Equal(roles, []string{"user", "assistant:charge", "tool", "assistant"}) {
		t.Errorf("the continued charge thread holds %v, want one call, its result and the answer", roles)
	}
}

// TestContinueOrphanOnReplica: two replicas of an app with continue_orphans
// share Postgres; the one running two runs is SIGKILLed while their tools
// run, and the other one continues both: a client rejoined there with
// Last-Event-ID sees the events go on to done, the started charge is
// reported and not run again, the idempotent refresh runs again, and the
// answer and conversation are those of a run without the crash.
func TestContinueOrphanOnReplica(t *testing.T) {
	dsn := continuationDatabase(t)
	bin := buildBinary(t, "e2e/testdata/goapp")
	mock := startAimock(t, "testdata/continuation.json")
	app, calls := continuationApp(t)
	env := append(aimockEnv(mock), "GOAPP_LOG="+calls, "DAWN_STORE="+dsn, "DAWN_STORE_LEASE=1s")
	a, kill := launchDawn(t, bin, app, env...)
	b := startDawn(t, bin, app, env...)
	testContinuation(t, calls, a, kill, func() string { return b })
}

// TestContinueOrphanAfterRestart: the single server of an app with
// continue_orphans on SQLite is SIGKILLed with two runs in flight; started
// again on the same store, it continues both.
func TestContinueOrphanAfterRestart(t *testing.T) {
	bin := buildBinary(t, "e2e/testdata/goapp")
	mock := startAimock(t, "testdata/continuation.json")
	app, calls := continuationApp(t)
	env := append(aimockEnv(mock), "GOAPP_LOG="+calls)
	a, kill := launchDawn(t, bin, app, env...)
	testContinuation(t, calls, a, kill, func() string { return startDawn(t, bin, app, env...) })
}

// continuationDatabase starts a throwaway Postgres for the test and
// returns a database on it; without the Postgres binaries the test is
// skipped (or fails when pgtest.RequireEnv is set).
func continuationDatabase(t *testing.T) string {
	t.Helper()
	if _, err := pgtest.BinDir(); err != nil {
		if os.Getenv(pgtest.RequireEnv) != "" {
			t.Fatalf("%s is set, but: %v", pgtest.RequireEnv, err)
		}
		t.Skipf("skipping the Postgres test: %v", err)
	}
	c, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatalf("start a throwaway Postgres: %v", err)
	}
	t.Cleanup(c.Stop)
	dsn, err := c.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
