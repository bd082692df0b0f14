//go:build unix

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// The LangGraph dialect on replicas of one Postgres: a cancel, a
// multitask_strategy "interrupt" and a stream rejoin sent to a replica that
// does not run the run reach the run on the replica that does, as Dawn's own
// cancel and rejoin do.

// lgReplicas starts two replicas of the held app on one Postgres database
// and returns their clients and the held model.
func lgReplicas(t *testing.T) (a, b *client, model *heldModel, logs func() string) {
	t.Helper()
	dsn := pgtest.Database(t)
	dir, env, model := heldApp(t)
	reps := startReplicas(t, 2, dir, dsn, env)
	a, b = newClient(reps[0].url), newClient(reps[1].url)
	t.Cleanup(a.close)
	t.Cleanup(b.close)
	return a, b, model, func() string {
		return "replica A:\n" + reps[0].logs.String() + "\nreplica B:\n" + reps[1].logs.String()
	}
}

// lgRunBody is a LangGraph run request on the held route.
func lgRunBody(text string, extra map[string]any) []byte {
	b := map[string]any{
		"assistant_id":  "/held",
		"if_not_exists": "create",
		"input":         map[string]any{"messages": []map[string]string{{"type": "human", "content": text}}},
	}
	for k, v := range extra {
		b[k] = v
	}
	data, _ := json.Marshal(b)
	return data
}

// lgRunObject is the part of a LangGraph Run these tests read.
type lgRunObject struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// startLGRun starts a background LangGraph run on thread th through c and
// waits until it is in its model call.
func startLGRun(t *testing.T, c *client, model *heldModel, th string, extra map[string]any) lgRunObject {
	t.Helper()
	r := c.must(t, http.MethodPost, "/threads/"+th+"/runs", lgRunBody("Hello", extra))
	var run lgRunObject
	if r.status != http.StatusOK || json.Unmarshal(r.body, &run) != nil || run.RunID == "" {
		t.Fatalf("POST /threads/%s/runs = %d %s, want 200 with a run", th, r.status, r.body)
	}
	waitArrived(t, model)
	return run
}

// waitLGStatus polls the run through c until its status is not "running"
// or "pending", and returns it.
func waitLGStatus(t *testing.T, c *client, th, runID string, logs func() string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var run lgRunObject
		c.getJSON(t, "/threads/"+th+"/runs/"+runID, &run)
		if run.Status != "running" && run.Status != "pending" {
			return run.Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s on thread %s is still %s 30s after it was cancelled\n%s", runID, th, run.Status, logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLangGraphCancelAcrossReplicas: a LangGraph run held on replica A is
// stopped by POST /threads/:id/runs/:run/cancel sent to replica B, and by a
// new run sent to B with multitask_strategy "interrupt", which then runs.
func TestLangGraphCancelAcrossReplicas(t *testing.T) {
	a, b, model, logs := lgReplicas(t)

	first := startLGRun(t, a, model, "lg-cancel", nil)
	r := b.must(t, http.MethodPost, "/threads/lg-cancel/runs/"+first.RunID+"/cancel?wait=1", nil)
	if r.status != http.StatusOK {
		t.Fatalf("cancel on replica B of replica A's run = %d %s, want 200", r.status, r.body)
	}
	if st := waitLGStatus(t, a, "lg-cancel", first.RunID, logs); st != "interrupted" {
		t.Errorf("the cancelled run is %s, want interrupted (LangGraph's name for a cancelled run)", st)
	}

	second := startLGRun(t, a, model, "lg-cancel", nil)
	r = b.must(t, http.MethodPost, "/threads/lg-cancel/runs", lgRunBody("Again", map[string]any{"multitask_strategy": "interrupt"}))
	var third lgRunObject
	if r.status != http.StatusOK || json.Unmarshal(r.body, &third) != nil || third.RunID == "" {
		t.Fatalf("a run on replica B with multitask_strategy interrupt while A runs one = %d %s, want 200 with the new run", r.status, r.body)
	}
	if st := waitLGStatus(t, b, "lg-cancel", second.RunID, logs); st != "interrupted" {
		t.Errorf("the run the new one interrupted is %s, want interrupted", st)
	}
	model.free()
	if st := waitLGStatus(t, b, "lg-cancel", third.RunID, logs); st != "success" {
		t.Errorf("the run started with multitask_strategy interrupt ended %s, want success", st)
	}
}

// lgStream GETs a LangGraph stream through c in the background: opened
// receives once the answer's headers arrived, and the events come on the
// returned channel once the stream ends.
func lgStream(c *client, path string, lastEventID string) (opened <-chan struct{}, events <-chan []stream.Event) {
	open := make(chan struct{})
	out := make(chan []stream.Event, 1)
	go func() {
		defer close(out)
		req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
		if err != nil {
			close(open)
			return
		}
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := c.http.Do(req)
		close(open)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			out <- []stream.Event{{Type: fmt.Sprintf("status %d", resp.StatusCode)}}
			return
		}
		got, _ := readEvents(resp.Body)
		out <- got
	}()
	return open, out
}

// finalValues returns the data of the last "values" part of events, or "".
func finalValues(events []stream.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == "values" {
			return string(events[i].Data)
		}
	}
	return ""
}

func partTypes(events []stream.Event) string {
	types := make([]string, len(events))
	for i, e := range events {
		types[i] = e.Type
	}
	return strings.Join(types, " ")
}

// TestLangGraphRejoinAcrossReplicas: a LangGraph stream rejoined on
// replica B for a run held on replica A, by run (with Last-Event-ID) and by
// thread, follows the run to its end: it ends with the final values and the
// updates of the model's answer, as the run's own stream on A does. A join
// on B waits for the run's end and answers its final values.
func TestLangGraphRejoinAcrossReplicas(t *testing.T) {
	a, b, model, logs := lgReplicas(t)
	run := startLGRun(t, a, model, "lg-rejoin", map[string]any{"stream_mode": []string{"values", "updates"}})

	const modes = "?stream_mode=values&stream_mode=updates"
	byRunOpen, byRun := lgStream(b, "/threads/lg-rejoin/runs/"+run.RunID+"/stream"+modes, "-1")
	byThreadOpen, byThread := lgStream(b, "/threads/lg-rejoin/stream", "")
	joined := make(chan reply, 1)
	go func() {
		r, err := b.do(http.MethodGet, "/threads/lg-rejoin/runs/"+run.RunID+"/join", nil)
		if err != nil {
			r = reply{status: -1, body: []byte(err.Error())}
		}
		joined <- r
	}()
	<-byRunOpen
	<-byThreadOpen
	time.Sleep(200 * time.Millisecond) // the join is waiting too
	model.free()

	for name, ch := range map[string]<-chan []stream.Event{"by run": byRun, "by thread": byThread} {
		var events []stream.Event
		select {
		case events = <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("the rejoin %s on replica B did not end within 30s of the run\n%s", name, logs())
		}
		if v := finalValues(events); !strings.Contains(v, "Held answer") {
			t.Errorf("the rejoin %s on replica B got parts [%s]; its last values %s, want the final values with the model's answer", name, partTypes(events), v)
		}
		updated := false
		for _, e := range events {
			updated = updated || (e.Type == "updates" && bytes.Contains(e.Data, []byte("Held answer")))
		}
		if !updated {
			t.Errorf("the rejoin %s on replica B got parts [%s], want the model's update with its answer", name, partTypes(events))
		}
	}
	// A join on B waits for the run's end too, and answers its values.
	if r := <-joined; r.status != http.StatusOK || !bytes.Contains(r.body, []byte("Held answer")) {
		t.Errorf("GET join on replica B = %d %s, want 200 with the final values", r.status, r.body)
	}
	if st := waitLGStatus(t, a, "lg-rejoin", run.RunID, logs); st != "success" {
		t.Errorf("the run ended %s, want success", st)
	}
}
