package langgraph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/langgraph"
	"github.com/tmc/langchaingo/llms"
)

// TestCreatedRunRolledBackBeforeItsAnswer: a run that another request
// rolls back (deleting it) between its start and its answer is still
// answered, with its id and as stopped, not with 404: it was created,
// and the client learns its fate from the run that replaced it.
func TestCreatedRunRolledBackBeforeItsAnswer(t *testing.T) {
	slow := func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		time.Sleep(200 * time.Millisecond)
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done"}}}, nil
	}
	h := apptest.New(t, supportApp(t), dawntest.Script().Then(slow).Repeat(), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"rb1"}`, nil)
	once := false
	defer langgraph.SetBeforeRunAnswer(func(threadID string, run *runner.Run) {
		if once {
			return
		}
		once = true
		resp := post(t, url+"/threads/rb1/runs", lgBody("/support/acme", "instead", map[string]any{"multitask_strategy": "rollback"}))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})()
	resp := post(t, url+"/threads/rb1/runs", lgBody("/support/acme", "first", nil))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &got) != nil || got.RunID == "" || got.Status != "interrupted" {
		t.Fatalf("a created run rolled back before its answer: %d %s; want 200 with its run_id, interrupted", resp.StatusCode, data)
	}
	if code := getJSON(t, url+"/threads/rb1/runs/"+got.RunID, nil); code != http.StatusNotFound {
		t.Errorf("the rolled-back run afterwards: %d, want 404 (rollback deleted it)", code)
	}
}
