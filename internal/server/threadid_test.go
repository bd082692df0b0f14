package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestDotThreadIDsRefused: "." and ".." are path segments every URL
// normalizer (fetch, the LangGraph SDK, curl) removes, so a thread named
// so could never be read, resumed or deleted: every surface that takes a
// client's thread id refuses them with 400 invalid_thread_id, and creates
// nothing.
func TestDotThreadIDsRefused(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	base := h.Serve(t)
	const dawnRun = `{"route":"/plain","input":{"messages":[{"role":"user","content":"hi"}]}}`
	const lgRun = `{"assistant_id":"/plain","if_not_exists":"create","input":{"messages":[{"type":"human","content":"hi"}]}}`
	for _, id := range []string{".", ".."} { // in a path as a client that does not normalize sends it
		for _, tc := range []struct{ surface, path, body string }{
			{"Dawn create", "/threads", `{"thread_id":"` + id + `"}`},
			{"Dawn run", "/threads/" + id + "/runs/wait", dawnRun},
			{"Dawn stream", "/threads/" + id + "/runs/stream", dawnRun},
			{"Dawn resume", "/threads/" + id + "/resume", `{"route":"/plain","resume":[{"interruptId":"i","status":"resolved","payload":"once"}]}`},
			{"LangGraph create", "/threads", `{"thread_id":"` + id + `","if_exists":"do_nothing"}`},
			{"LangGraph run", "/threads/" + id + "/runs/wait", lgRun},
			{"LangGraph background run", "/threads/" + id + "/runs", lgRun},
			{"AG-UI", "/agui/%2Fplain", `{"threadId":"` + id + `","runId":"r-1","messages":[{"id":"m-1","role":"user","content":"hi"}]}`},
		} {
			resp := post(t, base+tc.path, tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				resp.Body.Close()
				t.Errorf("%s with thread id %q: %d, want 400 invalid_thread_id", tc.surface, id, resp.StatusCode)
				continue
			}
			if e := decodeErr(t, resp); e.Error.Kind != "invalid_thread_id" || !strings.Contains(e.Error.Message, `"`+id+`"`) {
				t.Errorf("%s with thread id %q: error %+v, want invalid_thread_id naming the id", tc.surface, id, e)
			}
		}
	}
	if resp := post(t, base+"/threads/search", `{}`); resp.StatusCode == http.StatusOK {
		body := readBodyString(t, resp)
		if strings.Contains(body, `"thread_id":"."`) || strings.Contains(body, `"thread_id":".."`) {
			t.Errorf("a dot thread was created: %s", body)
		}
	}
	// Dots inside an id are still fine.
	if resp := post(t, base+"/threads", `{"thread_id":"a.b..c"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("thread id a.b..c: %d, want 200", resp.StatusCode)
	}
}

func readBodyString(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
