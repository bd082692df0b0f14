package langgraph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestRunsBatch: POST /runs/batch starts each run request of the array
// as POST /runs would, on a thread of its own, and answers the runs in
// order; a batch with a wrong request starts none of them and names its
// index.
func TestRunsBatch(t *testing.T) {
	app := writeApp(t, map[string]string{"agent/agent.md": "You help."})
	h := apptest.New(t, app, dawntest.Script().Reply("done").Repeat(), apptest.Options{})
	url := h.Serve(t)
	keep := func(msg string) string { return lgBody("agent", msg, map[string]any{"on_completion": "keep"}) }
	resp := post(t, url+"/runs/batch", "["+keep("one")+","+keep("two")+"]")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var runs []struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &runs) != nil || len(runs) != 2 || runs[0].ThreadID == runs[1].ThreadID || runs[0].RunID == "" {
		t.Fatalf("POST /runs/batch: %d %s, want two runs on threads of their own", resp.StatusCode, body)
	}
	for _, r := range runs {
		var joined struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		deadline := time.Now().Add(10 * time.Second)
		for getJSON(t, url+"/threads/"+r.ThreadID+"/runs/"+r.RunID+"/join", &joined); len(joined.Messages) < 2 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			getJSON(t, url+"/threads/"+r.ThreadID+"/runs/"+r.RunID+"/join", &joined)
		}
		if len(joined.Messages) != 2 || joined.Messages[1].Content != "done" {
			t.Errorf("run %s of the batch: %+v", r.RunID, joined)
		}
	}

	count := func() int {
		resp := post(t, url+"/threads/count", `{}`)
		defer resp.Body.Close()
		var n int
		_ = json.NewDecoder(resp.Body).Decode(&n)
		return n
	}
	before := count()
	resp = post(t, url+"/runs/batch", "["+keep("three")+","+lgBody("nowhere", "four", nil)+"]")
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(e.Error.Message, "[1]: ") {
		t.Errorf("a batch naming no assistant at [1]: %d %+v, want 404 naming [1]", resp.StatusCode, e)
	}
	if after := count(); after != before {
		t.Errorf("a refused batch started runs: threads %d, then %d", before, after)
	}
}

// TestJoinRunByID: GET /runs/:run/stream streams a run named by its id
// alone, as its thread's run stream does; a run that is not there is
// 404 Run not found.
func TestJoinRunByID(t *testing.T) {
	app := writeApp(t, map[string]string{"agent/agent.md": "You help."})
	h := apptest.New(t, app, dawntest.Script().Reply("done").Repeat(), apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/runs", lgBody("agent", "hi", map[string]any{"on_completion": "keep"}))
	var run struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /runs: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	byID := readLG(t, get(t, url+"/runs/"+run.RunID+"/stream?stream_mode=values", ""))
	byThread := readLG(t, get(t, url+"/threads/"+run.ThreadID+"/runs/"+run.RunID+"/stream?stream_mode=values", ""))
	if len(byID) < 2 || len(byID) != len(byThread) {
		t.Fatalf("GET /runs/%s/stream: %d parts, the thread's run stream %d", run.RunID, len(byID), len(byThread))
	}
	for i := range byID {
		if byID[i].Type != byThread[i].Type || string(byID[i].Data) != string(byThread[i].Data) {
			t.Errorf("part %d: %s %s, the thread's run stream %s %s", i, byID[i].Type, byID[i].Data, byThread[i].Type, byThread[i].Data)
		}
	}
	resp = get(t, url+"/runs/no-such-run/stream", "")
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(e.Error.Message, "Run not found") {
		t.Errorf("GET /runs/no-such-run/stream: %d %+v", resp.StatusCode, e)
	}
}
