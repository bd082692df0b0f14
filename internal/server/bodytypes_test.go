package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestBodyOfTheWrongJSONType: a body whose JSON has the wrong type for a
// field, or for the whole body, is a 400 that names the field and the type
// it takes in JSON's words, on every wire, never Go's type names (before:
// "cannot unmarshal array into Go value of type server.plain").
func TestBodyOfTheWrongJSONType(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Repeat(), apptest.Options{})
	base := h.Serve(t)
	for _, tc := range []struct{ path, body, says string }{
		{"/threads/t/runs/wait", `[]`, "the body must be a JSON object, not an array"},
		{"/threads/t/runs/wait", `{"route":"/plain","after_seconds":"soon"}`, "after_seconds must be a number, not a string"},
		{"/threads/t/runs/wait", `{"route":5}`, "route must be a string, not a number"},
		{"/threads/t/runs/wait", `{"assistant_id":"plain","after_seconds":"soon"}`, "after_seconds must be a number, not a string"},
		{"/assistants", `[]`, "the body must be a JSON object, not an array"},
		{"/assistants/search", `{"graph_id":5}`, "graph_id must be a string, not a number"},
		{"/runs/batch", `{}`, "the body must be a JSON array, not an object"},
		{"/runs/batch", `[5]`, "[0] must be a JSON object, not a number"},
		{"/v1/chat/completions", `{"model":"plain","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream must be true or false, not a string"},
		{"/agui/plain", `{"threadId":"a","runId":"r","messages":"hi"}`, "messages must be a JSON array, not a string"},
		{"/threads/t/runs/wait", `{"assistant_id":"plain","command":"x"}`, "command must be a JSON object, not a string"},
		{"/threads", `{"thread_id":"s","supersteps":{}}`, "supersteps must be a JSON array, not an object"},
		{"/runs/crons", `{"assistant_id":"plain","schedule":5}`, "schedule must be a string, not a number"},
		{"/runs/crons", `{"assistant_id":"plain","schedule":"0 9 * * *","config":"x"}`, "config must be a JSON object, not a string"},
	} {
		resp := post(t, base+tc.path, tc.body)
		data := string(readBody(t, resp))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(data, tc.says) || strings.Contains(data, "Go ") {
			t.Errorf("POST %s %s: %d %s, want 400 saying %q and no Go type", tc.path, tc.body, resp.StatusCode, data, tc.says)
		}
	}
}
