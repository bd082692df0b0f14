package langgraph_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/langgraph"
	"github.com/dawn-go/dawn/internal/store"
)

// TestStatelessRunKeepsItsThreadUntilAnswered: a stateless run that ends
// before its request answers (a fast model on a busy server) is read back
// from the store, so its thread is deleted only after the answer; it was
// deleted when the run ended, and POST /runs answered 404.
func TestStatelessRunKeepsItsThreadUntilAnswered(t *testing.T) {
	app := writeApp(t, map[string]string{"agent/agent.md": "You help."})
	h := apptest.New(t, app, dawntest.Script().Reply("done").Repeat(), apptest.Options{})
	url := h.Serve(t)
	t.Cleanup(langgraph.SetBeforeStatelessAnswer(func(threadID string, run *runner.Run) {
		<-run.Done()
		// Give a deletion on the run's end the time to happen.
		deadline := time.Now().Add(300 * time.Millisecond)
		for time.Now().Before(deadline) {
			if _, err := h.Store.GetThread(context.Background(), threadID); errors.Is(err, store.ErrNotFound) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}))
	for path, want := range map[string]string{"/runs/wait": "done", "/runs/stream": "done", "/runs": `"run_id"`} {
		resp := post(t, url+path, lgBody("agent", "hi", nil))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("POST %s: %d %s, want the run's answer", path, resp.StatusCode, body)
		}
	}
}
