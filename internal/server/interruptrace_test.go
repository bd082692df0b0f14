package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// slowTurn answers after a short wait, so that runs overlap.
func slowTurn(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
	time.Sleep(20 * time.Millisecond)
	return echoTurn(msgs, opts)
}

// TestConcurrentInterruptsAllStart: several requests with
// multitask_strategy interrupt (or rollback) sent at once to one thread,
// on either wire, each cancel what is in flight and start: none is
// refused with 409 run_in_flight because another of them started between
// its cancel and its start. Before, about one in fifteen was.
func TestConcurrentInterruptsAllStart(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Then(slowTurn).Repeat(), apptest.Options{})
	base := h.Serve(t)
	const rounds, at = 12, 4
	for _, strategy := range []string{"interrupt", "rollback"} {
		for _, dialect := range []string{"dawn", "langgraph"} {
			refused := 0
			for round := range rounds {
				thread := fmt.Sprintf("%s-%s-%d", strategy, dialect, round)
				body := multitaskBody("go", map[string]any{"multitask_strategy": strategy})
				path := base + "/threads/" + thread + "/runs/stream"
				if dialect == "langgraph" {
					data, _ := json.Marshal(map[string]any{"assistant_id": "plain", "if_not_exists": "create", "multitask_strategy": strategy,
						"input": map[string]any{"messages": []map[string]string{{"type": "human", "content": "go"}}}})
					body, path = string(data), base+"/threads/"+thread+"/runs"
				}
				var wg sync.WaitGroup
				var mu sync.Mutex
				for range at {
					wg.Go(func() {
						resp := post(t, path, body)
						data, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							mu.Lock()
							refused++
							t.Logf("%s %s: %d %s", dialect, strategy, resp.StatusCode, data)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			if refused > 0 {
				t.Errorf("%s on the %s wire: %d of %d concurrent requests were refused, want none", strategy, dialect, refused, rounds*at)
			}
		}
	}
}
