package a2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
)

// FuzzRPCBody posts arbitrary bodies to a route's A2A endpoint on the
// offline model. The answer is JSON-RPC, one response or a stream of
// them, each a result or an error with a code that says what was wrong,
// never an internal error, a 5xx or a Go stack trace.
func FuzzRPCBody(f *testing.F) {
	msg := `{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"Help me"}]}`
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":` + msg + `}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"message/stream","params":{"message":` + msg + `,"configuration":{"blocking":false}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","contextId":"f-1","taskId":"t","parts":[{"kind":"data","data":{"resume":[{"interruptId":"x","status":"resolved","payload":"once"}]}}]}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"nope","historyLength":2}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"id":""}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"tasks/resubscribe","params":{"id":"nope"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":6,"method":"tasks/pushNotificationConfig/set","params":{}}`))
	f.Add([]byte(`{"jsonrpc":"1.0","method":"message/send"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0"}]`))
	f.Add([]byte(`{`))
	f.Fuzz(fuzzRPCBody(f))
}

// rpcResponse is one JSON-RPC response as a client reads it.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func fuzzRPCBody(f *testing.F) func(t *testing.T, body []byte) {
	h := apptest.New(f, apptest.WriteApp(f, apptest.FuzzSupportFiles), models.NewOffline(), apptest.Options{})
	return func(t *testing.T, body []byte) {
		rec := apptest.ServeRecorded(h.API, http.MethodPost, "/a2a/support/acme", body)
		out := rec.Body.Bytes()
		if m := apptest.StackTrace.Find(out); m != nil && !bytes.Contains(body, m) {
			t.Fatalf("the answer holds %q, like a Go stack trace: %.500q", m, out)
		}
		if rec.Code >= 500 {
			t.Fatalf("status %d: %.500q", rec.Code, out)
		}
		if rec.Code != http.StatusOK {
			apptest.CheckErrorBody(t, rec) // a body Dawn refuses before JSON-RPC (413, 415)
			return
		}
		var answers []string
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			for line := range strings.Lines(string(out)) {
				if rest, ok := strings.CutPrefix(line, "data: "); ok {
					answers = append(answers, rest)
				}
			}
		} else {
			answers = append(answers, string(out))
		}
		if len(answers) == 0 {
			t.Fatalf("no JSON-RPC response: %.500q", out)
		}
		for _, a := range answers {
			var r rpcResponse
			if err := json.Unmarshal([]byte(a), &r); err != nil || r.JSONRPC != "2.0" || (r.Error == nil) == (r.Result == nil) {
				t.Fatalf("not one JSON-RPC response with a result or an error: %.500q (%v)", a, err)
			}
			if r.Error != nil && (r.Error.Code == -32603 || r.Error.Message == "") {
				t.Fatalf("an internal or empty error: %.500q", a)
			}
		}
	}
}
