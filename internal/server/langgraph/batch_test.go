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
