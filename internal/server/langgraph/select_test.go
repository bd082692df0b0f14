package langgraph_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestSearchSelectsFields: threads.search and runs.list keep only the
// fields select names, as LangGraph's do (runs.list sends select as a
// JSON list in the query, as the SDK writes it); a field they do not
// have, and threads.search's extract, which Dawn does not serve, are a
// 400 naming them rather than ignored.
func TestSearchSelectsFields(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1"), apptest.Options{})
	base := h.Serve(t)
	postOK(t, base+"/threads", `{"thread_id":"sel1","metadata":{"tag":"sel"}}`, nil)
	postOK(t, base+"/threads/sel1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)

	var threads []map[string]json.RawMessage
	postOK(t, base+"/threads/search", `{"metadata":{"tag":"sel"},"select":["thread_id","status"]}`, &threads)
	if len(threads) != 1 || !slices.Equal(keysOf(threads[0]), []string{"status", "thread_id"}) {
		t.Errorf("threads.search with select: %v", threads)
	}
	var runs []map[string]json.RawMessage
	q := url.Values{"limit": {"10"}, "offset": {"0"}, "select": {`["run_id","status"]`}}
	if code := getJSON(t, base+"/threads/sel1/runs?"+q.Encode(), &runs); code != http.StatusOK || len(runs) != 1 || !slices.Equal(keysOf(runs[0]), []string{"run_id", "status"}) {
		t.Errorf("runs.list with select: %d %v", code, runs)
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/threads/search", `{"select":["thread_id","colour"]}`, "colour"},
		{"/threads/search", `{"extract":{"last":"values.messages"}}`, "extract"},
	} {
		resp := post(t, base+tc.path, tc.body)
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("POST %s %s: %d %q, want a 400 naming %s", tc.path, tc.body, resp.StatusCode, e.Error.Message, tc.want)
		}
	}
	q.Set("select", `["run_id","colour"]`)
	if code := getJSON(t, base+"/threads/sel1/runs?"+q.Encode(), nil); code != http.StatusBadRequest {
		t.Errorf("runs.list selecting a field runs lack: %d, want 400", code)
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
