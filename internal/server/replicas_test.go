package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// TestSupervisorAcrossReplicas: two servers share one Postgres database, as
// replicas behind a load balancer. A run holds on replica A; the plan's
// pause or cancel is sent to replica B, which does not have the run. The
// signal reaches the run on A at its next step boundary, B answers with the
// plan as the run left it, and A's stream records it.
func TestSupervisorAcrossReplicas(t *testing.T) {
	for _, action := range []string{"pause", "cancel"} {
		t.Run(action, func(t *testing.T) {
			dsn := pgtest.Database(t)
			gate := make(chan struct{})
			var opened sync.Once
			open := func() { opened.Do(func() { close(gate) }) }
			t.Cleanup(open) // a failed test must not leave the run held
			model := dawntest.Script().
				CallTool("writeTodos", list(3, 0, false)).
				Wait(gate).CallTool("writeTodos", list(3, 1, false)).
				Reply("never")
			dir := enforcedApp(t, "", 3)
			a := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			b := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			urlA, urlB := a.Serve(t), b.Serve(t)
			resp := post(t, urlA+"/threads/p/runs/stream", runBody("/job", "go"))
			done := make(chan []stream.Event)
			go func() { done <- readSSE(t, resp) }()
			waitFor(t, func() bool { return model.Calls() >= 2 })
			var inFlight struct {
				RunInFlight bool `json:"run_in_flight"`
			}
			getJSON(t, urlB+"/threads/p/plan", &inFlight)
			if !inFlight.RunInFlight {
				t.Errorf("replica B's plan view says no run in flight while A runs one")
			}
			if action == "pause" {
				// Let the run go on once the pause has reached it on A, so
				// that it meets the pause at its next step boundary.
				go openWhenPausePending(urlA, open)
			}
			want := string(map[string]harness.State{"pause": harness.Paused, "cancel": harness.Cancelled}[action])
			state, events := signalOnReplica(t, urlB, action, want, done, open)
			if state != want {
				t.Fatalf("%s on replica B: the plan is %s, want %s", action, state, want)
			}
			if !hasEvent(events, "plan_"+want) || events[len(events)-1].Type != "done" {
				t.Fatalf("replica A's stream = %v, want plan_%s then done", dawntest.Types(events), want)
			}
		})
	}
}

// openWhenPausePending calls open once the plan at url has a pending
// pause, or after 30 seconds.
func openWhenPausePending(url string, open func()) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var v struct {
			PendingSignal string `json:"pending_signal"`
		}
		if r, err := http.Get(url + "/threads/p/plan"); err == nil {
			_ = json.NewDecoder(r.Body).Decode(&v)
			r.Body.Close()
		}
		if v.PendingSignal == "pause" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	open()
}

// signalOnReplica sends action to the plan of thread p on the replica at
// url, which does not have the run, and returns the plan's state it
// reports and the run's stream from done. An answer that is neither 200
// with the plan in state want nor 202 (the run had not reached the action
// within the wait, on a loaded machine: the plan shows it once the run
// ends) fails the test.
func signalOnReplica(t *testing.T, url, action, want string, done <-chan []stream.Event, open func()) (string, []stream.Event) {
	t.Helper()
	sr := post(t, url+"/threads/p/plan/"+action, "")
	var view struct{ State string }
	_ = json.NewDecoder(sr.Body).Decode(&view)
	sr.Body.Close()
	switch {
	case sr.StatusCode == http.StatusAccepted:
		events := <-done
		getJSON(t, url+"/threads/p/plan", &view)
		return view.State, events
	case sr.StatusCode != http.StatusOK || view.State != want:
		open()
		<-done
		t.Fatalf("%s on replica B: %d %+v, want 200 (or 202) and the plan %s", action, sr.StatusCode, view, want)
	}
	return view.State, <-done
}

// TestRejoinFollowsRunOnAnotherServer: two servers share one store (a
// SQLite file, and a Postgres database). A run holds on A between two
// steps; a rejoin of its stream on B, which does not have the run, follows
// it from the store to its done event, with the events A streamed.
func TestRejoinFollowsRunOnAnotherServer(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "dawn.db")
			if kind == "postgres" {
				dsn = pgtest.Database(t)
			}
			gate := make(chan struct{})
			var opened sync.Once
			open := func() { opened.Do(func() { close(gate) }) }
			t.Cleanup(open)
			model := dawntest.Script().
				CallTool("writeTodos", list(3, 0, false)).
				Wait(gate).CallTool("writeTodos", list(3, 3, false)).
				Reply("all done")
			dir := enforcedApp(t, "", 3)
			a := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			b := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			urlA, urlB := a.Serve(t), b.Serve(t)
			resp := post(t, urlA+"/threads/f/runs/stream", runBody("/job", "go"))
			runID := resp.Header.Get("Dawn-Run-Id")
			done := make(chan []stream.Event)
			go func() { done <- readSSE(t, resp) }()
			waitFor(t, func() bool { return model.Calls() >= 2 })

			join, err := http.Get(urlB + "/threads/f/runs/" + runID + "/stream")
			if err != nil {
				t.Fatal(err)
			}
			followed := make(chan []stream.Event)
			go func() { followed <- readSSE(t, join) }()
			open()
			want := <-done
			got := <-followed
			if len(want) == 0 || want[len(want)-1].Type != stream.TypeDone {
				t.Fatalf("A's own stream = %v, want it to end with done", dawntest.Types(want))
			}
			if fmt.Sprint(eventKeys(got)) != fmt.Sprint(eventKeys(want)) {
				t.Errorf("B followed %v, A streamed %v", eventKeys(got), eventKeys(want))
			}
		})
	}
}

// eventKeys are the ids and types of events.
func eventKeys(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d:%s", e.ID, e.Type)
	}
	return out
}

// TestCancelAcrossReplicas: a cancel sent to a replica that does not have
// the run stops it on the replica that does, waiting for the end by
// default and answering at once with ?wait=false.
func TestCancelAcrossReplicas(t *testing.T) {
	for _, query := range []string{"", "?wait=false"} {
		t.Run("cancel"+query, func(t *testing.T) {
			dsn := pgtest.Database(t)
			gate := make(chan struct{})
			var opened sync.Once
			open := func() { opened.Do(func() { close(gate) }) }
			t.Cleanup(open)
			model := dawntest.Script().CallTool("writeTodos", list(3, 0, false)).Wait(gate).Reply("never")
			dir := enforcedApp(t, "", 3)
			a := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			b := apptest.New(t, dir, model, apptest.Options{StorePath: dsn})
			urlA, urlB := a.Serve(t), b.Serve(t)
			resp := post(t, urlA+"/threads/c/runs/stream", runBody("/job", "go"))
			runID := resp.Header.Get("Dawn-Run-Id")
			done := make(chan []stream.Event)
			go func() { done <- readSSE(t, resp) }()
			waitFor(t, func() bool { return model.Calls() >= 2 })
			cr := post(t, urlB+"/threads/c/cancel"+query, "")
			var body struct {
				ThreadID string `json:"thread_id"`
				Status   string `json:"status"`
			}
			if err := json.NewDecoder(cr.Body).Decode(&body); err != nil {
				t.Errorf("cancel on replica B: body not JSON: %v", err)
			}
			cr.Body.Close()
			if cr.StatusCode != 200 || body.Status != "interrupted" || body.ThreadID != "c" {
				open()
				<-done
				t.Fatalf("cancel on replica B = %d %+v, want Dawn's 200 {thread_id, status: interrupted}", cr.StatusCode, body)
			}
			events := <-done
			if len(events) == 0 || events[len(events)-1].Type != stream.TypeDone {
				t.Fatalf("replica A's stream = %v, want it to end with done", dawntest.Types(events))
			}
			waitFor(t, func() bool {
				r, err := b.Store.GetRun(context.Background(), runID)
				return err == nil && r.Status == "cancelled"
			})
		})
	}
}
