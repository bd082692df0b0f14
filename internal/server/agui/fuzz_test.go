package agui_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
)

// FuzzAGUIBody posts arbitrary route keys and bodies to /agui on the
// offline model. The answer is a 4xx with a JSON error body, never a 5xx or
// a Go stack trace, or a 200 stream of JSON events that starts with
// RUN_STARTED and ends with its one terminal event.
func FuzzAGUIBody(f *testing.F) {
	f.Add("/support/acme#agent", []byte(`{"threadId":"a1","runId":"r","messages":[{"id":"m","role":"user","content":"Help me"}],"state":{},"tools":[],"context":[]}`))
	f.Add("support/acme", []byte(`{"threadId":"a2","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"hi"}]}],"state":{"priority":"high","tags":["x"],"todos":[],"subagents":{}}}`))
	f.Add("/research", []byte(`{"threadId":"a3","runId":"r","messages":[{"id":"m","role":"assistant","content":"x"},{"id":"n","role":"user","content":"find"}]}`))
	f.Add("/support/[tenant]", []byte(`{"threadId":"a4","runId":"r","messages":[{"id":"m","role":"user","content":"x"}],"state":{"tags":"nope"}}`))
	f.Add("/support/acme", []byte(`{"threadId":"a5","runId":"r","messages":[{"id":"m","role":"user","content":"x"}],"state":[1],"resume":[]}`))
	f.Add("/nope", []byte(`{"threadId":"a6","runId":"r","messages":[]}`))
	f.Add("", []byte(`{`))
	f.Add("/../etc", []byte(`{"threadId":"../x","runId":7}`))
	f.Fuzz(fuzzAGUIBody(f))
}

func fuzzAGUIBody(f *testing.F) func(t *testing.T, key string, body []byte) {
	h := apptest.New(f, writeFuzzApp(f, fuzzSupportFiles), models.NewOffline(), apptest.Options{})
	return func(t *testing.T, key string, body []byte) {
		target := "/agui/" + url.PathEscape(key)
		rec := serveFuzz(h.API, http.MethodPost, target, body)
		var in struct {
			ThreadID string `json:"threadId"`
		}
		if json.Unmarshal(body, &in) == nil && in.ThreadID != "" {
			defer deleteThread(h.API, url.PathEscape(in.ThreadID))
		}
		out := rec.Body.Bytes()
		if m := stackTrace.Find(out); m != nil && !bytes.Contains(body, m) && !strings.Contains(key, string(m)) {
			t.Fatalf("POST %s: the answer holds %q, like a Go stack trace: %.500q", target, m, out)
		}
		switch {
		case rec.Code >= 500:
			t.Fatalf("POST %s: status %d: %.500q", target, rec.Code, out)
		case rec.Code >= 300:
			checkErrorBody(t, rec)
		default:
			checkAGUIStream(t, out)
		}
	}
}

// checkAGUIStream fails unless body is "data: {json}" blocks of events with
// a type, RUN_STARTED first and one RUN_FINISHED or RUN_ERROR last.
func checkAGUIStream(t *testing.T, body []byte) {
	t.Helper()
	var types []string
	for block := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("block %q is not one data line", block)
		}
		var e struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil || e.Type == "" {
			t.Fatalf("event %q: not a JSON object with a type (%v)", data, err)
		}
		types = append(types, e.Type)
	}
	terminal := 0
	for _, typ := range types {
		if typ == "RUN_FINISHED" || typ == "RUN_ERROR" {
			terminal++
		}
	}
	last := types[len(types)-1]
	if types[0] != "RUN_STARTED" || terminal != 1 || (last != "RUN_FINISHED" && last != "RUN_ERROR") {
		t.Fatalf("events %v: want RUN_STARTED first and one terminal event last", types)
	}
}
