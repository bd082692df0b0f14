package openai_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
)

// FuzzCompletionBody posts arbitrary bodies to /v1/chat/completions on the
// offline model. The answer is a 4xx in OpenAI's error shape, never a 5xx
// or a Go stack trace, or a 200 chat.completion, or a 200 stream of
// chat.completion.chunk events ending with data: [DONE].
func FuzzCompletionBody(f *testing.F) {
	f.Add([]byte(`{"model":"support/acme","messages":[{"role":"user","content":"Help me"}]}`))
	f.Add([]byte(`{"model":"/support/[tenant]","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`))
	f.Add([]byte(`{"model":"research","metadata":{"thread_id":"f-1"},"messages":[{"role":"assistant","content":null},{"role":"user","content":"find"}]}`))
	f.Add([]byte(`{"model":"research/subagents/researcher","messages":[]}`))
	f.Add([]byte(`{"model":"plain","n":3,"tools":[{}],"messages":[{"role":"tool","content":7}]}`))
	f.Add([]byte(`{"model":"../x","metadata":{"thread_id":".."}}`))
	f.Add([]byte(`{`))
	f.Fuzz(fuzzCompletionBody(f))
}

func fuzzCompletionBody(f *testing.F) func(t *testing.T, body []byte) {
	h := apptest.New(f, apptest.WriteApp(f, apptest.FuzzSupportFiles), models.NewOffline(), apptest.Options{})
	return func(t *testing.T, body []byte) {
		rec := apptest.ServeRecorded(h.API, http.MethodPost, "/v1/chat/completions", body)
		var in struct {
			Metadata struct {
				ThreadID string `json:"thread_id"`
			} `json:"metadata"`
		}
		if json.Unmarshal(body, &in) == nil && in.Metadata.ThreadID != "" {
			defer apptest.DeleteThread(h.API, in.Metadata.ThreadID)
		}
		out := rec.Body.Bytes()
		if m := apptest.StackTrace.Find(out); m != nil && !bytes.Contains(body, m) {
			t.Fatalf("the answer holds %q, like a Go stack trace: %.500q", m, out)
		}
		switch {
		case rec.Code >= 500:
			t.Fatalf("status %d: %.500q", rec.Code, out)
		case rec.Code >= 300:
			var e oaError
			if err := json.Unmarshal(out, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("status %d with a body not in OpenAI's error shape: %.300q (%v)", rec.Code, out, err)
			}
		case strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !strings.HasSuffix(string(out), "data: [DONE]\n\n") || !strings.Contains(string(out), `"chat.completion.chunk"`) {
				t.Fatalf("stream does not end with [DONE]: %.500q", out)
			}
		default:
			var c completion
			if err := json.Unmarshal(out, &c); err != nil || c.Object != "chat.completion" || len(c.Choices) != 1 {
				t.Fatalf("200 with %.500q (%v)", out, err)
			}
		}
	}
}
