package langgraph_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// TestLangGraphErrorEvent: a run whose model call fails ends its
// LangGraph stream, streamed or joined, with an error event whose data is
// {error: name, message: text}, as LangGraph's SDK reads it. The name is
// the kind of Dawn's error (ModelError here), the message its text.
func TestLangGraphErrorEvent(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Fail(errors.New("Boo!")).Fail(errors.New("Boo!")), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"e1"}`, nil)
	streamed := readLG(t, post(t, url+"/threads/e1/runs/stream", lgBody("/plain", "hi", map[string]any{"stream_mode": []string{"debug", "events"}})))
	checkErrorEvent(t, "streamed", streamed)

	postOK(t, url+"/threads", `{"thread_id":"e2"}`, nil)
	var run struct {
		RunID string `json:"run_id"`
	}
	postOK(t, url+"/threads/e2/runs", lgBody("/plain", "hi", nil), &run)
	resp := get(t, url+"/threads/e2/runs/"+run.RunID+"/stream?cancel_on_disconnect=false", "")
	joined := readLG(t, resp)
	checkErrorEvent(t, "joined", joined)
}

func checkErrorEvent(t *testing.T, how string, events []stream.Event) {
	t.Helper()
	if len(events) == 0 {
		t.Fatalf("%s: no events", how)
	}
	last := events[len(events)-1]
	var data map[string]any
	_ = json.Unmarshal(last.Data, &data)
	msg, _ := data["message"].(string)
	if last.Type != "error" || data["error"] != "ModelError" || !strings.HasSuffix(msg, "Boo!") || len(data) != 2 {
		t.Fatalf("%s: the last event is %s %s, want error {error: ModelError, message: ...Boo!}", how, last.Type, last.Data)
	}
}
