package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dawn-go/dawn/markers"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// checkSSE parses a stream body and fails unless it is well formed: ids 1..N
// in order, every data a JSON object, ending with exactly one done.
func checkSSE(t *testing.T, body []byte) []stream.Event {
	t.Helper()
	r := stream.NewReader(bytes.NewReader(body))
	var events []stream.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SSE does not parse after %d events: %v", len(events), err)
		}
		if e.ID != int64(len(events)+1) {
			t.Fatalf("event %d (%s) has id %d, want %d", len(events), e.Type, e.ID, len(events)+1)
		}
		// Every event's data is a JSON object, but a chunk's, which is a
		// bare JSON string as Dawn sends it.
		want := byte('{')
		if e.Type == stream.TypeChunk {
			want = '"'
		}
		if !json.Valid(e.Data) || len(e.Data) == 0 || e.Data[0] != want {
			t.Fatalf("event %d (%s) data is not a JSON %s: %.200q", e.ID, e.Type, map[byte]string{'{': "object", '"': "string"}[want], e.Data)
		}
		if len(events) > 0 && events[len(events)-1].Type == stream.TypeDone {
			t.Fatalf("event %s after done", e.Type)
		}
		events = append(events, e)
	}
	if len(events) == 0 || events[len(events)-1].Type != stream.TypeDone {
		t.Fatalf("stream of %d events does not end with done", len(events))
	}
	return events
}

// FuzzRunBody posts arbitrary bytes to runs/wait, runs/stream and /threads
// of an in-process server on the offline model. Whatever the body and the
// thread id, the answer is a 2xx or a 4xx with a JSON error body, never a
// 5xx or a Go stack trace, and a stream is well-formed SSE ending in done.
func FuzzRunBody(f *testing.F) {
	f.Add(uint8(0), "t1", []byte(`{"route":"/support/acme","input":{"messages":[{"role":"user","content":"Help me with my account"}]}}`))
	f.Add(uint8(1), "t2", []byte(`{"route":"/support/[tenant]#agent","input":{"messages":[{"role":"user","content":"hi"}],"priority":"high","tags":["a"]}}`))
	f.Add(uint8(1), "t3", []byte(`{"assistant_id":"/research","input":{"messages":[{"type":"human","content":"find"}]}}`))
	f.Add(uint8(1), "t3b", []byte(`{"assistant_id":"/support/[tenant]","if_not_exists":"create","context":{"tenant":"acme"},"stream_mode":["values","updates","messages-tuple","messages","custom"],"stream_subgraphs":true,"input":{"messages":"find"}}`))
	f.Add(uint8(0), "t3c", []byte(`{"assistant_id":"/research","if_not_exists":"create","input":{"messages":[{"type":"human","content":[{"type":"text","text":"a"}]}]}}`))
	f.Add(uint8(0), "t4", []byte(`{"route":"/support/acme","input":{"messages":[{"role":"user","content":"x"}],"todos":[]}}`))
	f.Add(uint8(0), "t5", []byte(`{"route":"/support/acme","input":{"messages":[{"role":"assistant","content":"x"}]}}`))
	f.Add(uint8(0), "t6", []byte(`{"route":"/support/acme","input":{"messages":[]}}`))
	f.Add(uint8(0), "t7", []byte(`{"route":"/../etc","input":{"messages":[{"role":"user","content":"x"}]}}`))
	f.Add(uint8(1), "t8", []byte(`{"route":"/support/a\\b","input":{"messages":[{"role":"user","content":"x"}]}}`))
	f.Add(uint8(0), "t9", []byte(`{"route":"/support/acme","input":"nope"}`))
	f.Add(uint8(0), "", []byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`))
	f.Add(uint8(2), "", []byte(`{"metadata":{"a":1},"thread_id":"chosen"}`))
	f.Add(uint8(2), "", []byte(`{"metadata":[1]}`))
	f.Add(uint8(2), "", []byte(`{"thread_id":"../../etc/passwd"}`))
	f.Add(uint8(1), "a/../b", []byte("\xef\xbb\xbf{\"route\":\"/support/acme\",\r\n\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"\\u0000\xff\xfe\"}]}}"))
	f.Add(uint8(0), "%2e%2e", []byte("{\"route\":\"/support/acme\",\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"a\x00b\"}]}}"))
	f.Fuzz(fuzzRunBody(f))
}

func fuzzRunBody(f *testing.F) func(t *testing.T, endpoint uint8, threadID string, body []byte) {
	h := apptest.New(f, writeFuzzApp(f, fuzzSupportFiles), models.NewOffline(), apptest.Options{})
	var n atomic.Int64
	return func(t *testing.T, endpoint uint8, threadID string, body []byte) {
		id := threadID
		if id == "" {
			id = fmt.Sprintf("fz-%d", n.Add(1))
		}
		escaped := url.PathEscape(id)
		var target string
		switch endpoint % 3 {
		case 0:
			target = "/threads/" + escaped + "/runs/wait"
		case 1:
			target = "/threads/" + escaped + "/runs/stream"
		default:
			target = "/threads"
		}
		rec := serveFuzz(h.API, http.MethodPost, target, body)
		defer cleanUpThreads(h.API, escaped, rec)

		out := rec.Body.Bytes()
		if m := stackTrace.Find(out); m != nil && !bytes.Contains(body, m) && !strings.Contains(id, string(m)) {
			t.Fatalf("POST %s: the answer holds %q, like a Go stack trace: %.500q", target, m, out)
		}
		switch {
		case rec.Code >= 500:
			t.Fatalf("POST %s: status %d: %.500q", target, rec.Code, out)
		case rec.Code >= 300:
			checkErrorBody(t, rec)
		case endpoint%3 == 1:
			if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("runs/stream answered 200 with Content-Type %q", ct)
			}
			if bytes.HasPrefix(out, []byte("event: metadata\n")) {
				checkLGSSE(t, out) // a body with assistant_id speaks LangGraph
			} else {
				checkSSE(t, out)
			}
		default:
			var v map[string]json.RawMessage
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("POST %s: 200 with a body that is not a JSON object: %.300q", target, out)
			}
		}
	}
}

// cleanUpThreads deletes the thread a request used or created, so the
// in-memory store stays small over millions of inputs.
func cleanUpThreads(h http.Handler, escaped string, rec *httptest.ResponseRecorder) {
	var created struct {
		ThreadID string `json:"thread_id"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &created) == nil && created.ThreadID != "" {
		deleteThread(h, url.PathEscape(created.ThreadID))
	}
	deleteThread(h, escaped)
}

// echoCase is what the echo model says and its echo tool returns for one
// fuzz input, found by the token the input's user message carries.
type echoCase struct{ reply, tool string }

// echoModel is a stateless model for FuzzSSEFromModelText. For a user
// message holding a token it says the case's reply (streamed word by word)
// and calls the echo tool; once the tool answered, it says the reply again.
type echoModel struct{ cases *sync.Map }

func (m echoModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	token, answered := "", false
	for _, mc := range msgs {
		for _, p := range mc.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				if mc.Role == llms.ChatMessageTypeHuman {
					token = p.Text
				}
			case llms.ToolCallResponse:
				answered = true
			}
		}
	}
	v, ok := m.cases.Load(token)
	if !ok {
		return nil, fmt.Errorf("echo model: no case for %q", token)
	}
	c := v.(echoCase)
	if opts.StreamingFunc != nil {
		for _, word := range strings.SplitAfter(c.reply, " ") {
			if word == "" {
				continue
			}
			if err := opts.StreamingFunc(ctx, []byte(word)); err != nil {
				return nil, err
			}
		}
	}
	choice := &llms.ContentChoice{Content: c.reply, StopReason: "stop"}
	if !answered {
		call := llms.ToolCall{ID: "call_echo", Type: "function", FunctionCall: &llms.FunctionCall{Name: "echo", Arguments: `{"token":` + strings.TrimSpace(string(mustMarshal(token))) + `}`}}
		choice.ToolCalls = []llms.ToolCall{call}
		choice.FuncCall = call.FunctionCall
		choice.StopReason = "tool_calls"
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

func (m echoModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// echoTool returns the case's tool text, as a JSON string, for a token.
type echoTool struct{ cases *sync.Map }

func (echoTool) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{Name: "echo", Description: "Echoes the case's text.", Schema: json.RawMessage(`{"type":"object","properties":{"token":{"type":"string"}}}`)}
}

func (e echoTool) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in struct{ Token string }
	if err := json.Unmarshal(inv.Input, &in); err != nil {
		return capabilities.Result{}, err
	}
	v, ok := e.cases.Load(in.Token)
	if !ok {
		return capabilities.Result{}, fmt.Errorf("no case for %q", in.Token)
	}
	return capabilities.Result{Output: mustMarshal(v.(echoCase).tool)}, nil
}

func mustMarshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// jsonNormal is s as it reads back after a JSON round trip: each invalid
// UTF-8 byte becomes U+FFFD.
func jsonNormal(s string) string {
	var out string
	_ = json.Unmarshal(mustMarshal(s), &out)
	return out
}

// FuzzSSEFromModelText has a model whose text, and a tool whose output, are
// arbitrary bytes (newlines, "\r", "event:" and "data:" lookalikes, NUL,
// invalid UTF-8). The stream must still parse into events with JSON data;
// the chunks must add up to the model's text and the tool_result must carry
// the tool's text, both after JSON's UTF-8 normalisation.
func FuzzSSEFromModelText(f *testing.F) {
	f.Add("Your account is fine.", "plain output")
	f.Add("line one\nline two\r\nline three\rend", "a\nb\r\nc")
	f.Add("\n\nevent: done\ndata: {}\n\nid: 99\n", "\n\nevent: done\ndata: {\"output\":1}\n\n")
	f.Add(": comment\nretry: 1\ndata: x\n\n", "id: 0\x00\n")
	f.Add("\xef\xbb\xbfBOM first", "\xff\xfe\xfd invalid")
	f.Add("NUL \x00 byte and \xe2\x82 cut rune", "\u2028\u2029 separators")
	f.Add(strings.Repeat("[", 4096), strings.Repeat("{\"a\":", 1000))
	f.Add("", "")
	f.Fuzz(fuzzSSEFromModelText(f))
}

func fuzzSSEFromModelText(f *testing.F) func(t *testing.T, reply, tool string) {
	cases := &sync.Map{}
	dir := writeFuzzApp(f, map[string]string{"echo/agent.md": "You echo."})
	tools := []capabilities.AppTool{{Tool: echoTool{cases: cases}}}
	h := apptest.New(f, dir, echoModel{cases: cases}, apptest.Options{Tools: tools})
	var n atomic.Int64
	return func(t *testing.T, reply, tool string) {
		k := n.Add(1)
		token, thread := fmt.Sprintf("tok-%d", k), fmt.Sprintf("sse-%d", k)
		cases.Store(token, echoCase{reply: reply, tool: tool})
		defer cases.Delete(token)
		body := mustMarshal(map[string]any{"route": "/echo", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": token}}}})
		rec := serveFuzz(h.API, http.MethodPost, "/threads/"+thread+"/runs/stream", body)
		defer deleteThread(h.API, thread)
		if rec.Code != http.StatusOK {
			t.Fatalf("runs/stream: status %d: %.300q", rec.Code, rec.Body.Bytes())
		}
		events := checkSSE(t, rec.Body.Bytes())
		var chunks strings.Builder
		results := 0
		for _, e := range events {
			switch e.Type {
			case stream.TypeChunk:
				var text string // Dawn's shape: a bare JSON string
				if err := json.Unmarshal(e.Data, &text); err != nil {
					t.Fatalf("chunk %d data %q is not a JSON string (%v)", e.ID, e.Data, err)
				}
				chunks.WriteString(text)
			case stream.TypeToolResult:
				results++
				var r struct {
					Output string `json:"output"`
					Error  string `json:"error"`
				}
				if err := json.Unmarshal(e.Data, &r); err != nil || r.Error != "" {
					t.Fatalf("tool_result %d = %q (%v)", e.ID, e.Data, err)
				}
				if want := jsonNormal(tool); r.Output != want {
					t.Fatalf("tool_result output = %q, want %q", r.Output, want)
				}
			case stream.TypeToolCall, stream.TypeModelCall, stream.TypeDone:
			default:
				t.Fatalf("unexpected event type %q", e.Type)
			}
		}
		if results != 1 {
			t.Fatalf("%d tool_result events, want 1", results)
		}
		// Each turn's text is encoded on its own: bytes ending one turn and
		// starting the next never join into a rune.
		if want := jsonNormal(reply) + jsonNormal(reply); chunks.String() != want {
			t.Fatalf("chunks add up to %q, want %q", chunks.String(), want)
		}
		var done struct {
			Output struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
			} `json:"output"`
		}
		if err := json.Unmarshal(events[len(events)-1].Data, &done); err != nil {
			t.Fatalf("done data: %v", err)
		}
		msgs := done.Output.Messages
		if len(msgs) != 4 || msgs[3].Role != "assistant" || msgs[3].Content != jsonNormal(reply) {
			t.Fatalf("final messages = %+v, want user, assistant, tool, assistant %q", msgs, jsonNormal(reply))
		}
	}
}

// FuzzPlanMD loads an app whose route has an arbitrary plan.md. app.Load
// never panics; it either fails with an error naming plan.md, or prepares
// the route with a todos default that is a list of valid todos.
func FuzzPlanMD(f *testing.F) {
	for _, seed := range planSeeds() {
		f.Add(seed)
	}
	dir := f.TempDir()
	route := filepath.Join(dir, "r")
	if err := os.MkdirAll(route, 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(route, "agent.md"), []byte("---\ndescription: fuzz\n---\nWork."), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(route, "plan.md"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			if !strings.Contains(err.Error(), "plan.md") {
				t.Fatalf("error does not name plan.md: %v", err)
			}
			return
		}
		p := a.Routes["/r"]
		if p == nil {
			t.Fatalf("route /r missing without an error; routes %v", a.Routes)
		}
		var todos []struct {
			Content *string `json:"content"`
			Status  string  `json:"status"`
		}
		raw := p.InitialState()[planning.StateField]
		if err := json.Unmarshal(raw, &todos); err != nil || todos == nil {
			t.Fatalf("todos default %.200q is not a list (%v)", raw, err)
		}
		for i, td := range todos {
			if td.Content == nil || *td.Content == "" || !planning.Status(td.Status).Valid() {
				t.Fatalf("todos[%d] = %+v is not a valid todo", i, td)
			}
		}
	})
}

// planSeeds are the nasty plan.md inputs the seed corpus starts from; the
// same cases are in testdata/fuzz/FuzzPlanMD.
func planSeeds() [][]byte {
	return [][]byte{
		[]byte("- [ ] Understand the customer request\n- [x] Check account context\n"),
		[]byte("---\nenforce: true\ngoal: g\n---\n- [ ] a\n\n## Done when\n- [ ] b\n"),
		[]byte("---\nenforce: maybe\n---\n- [ ] a\n"),
		[]byte("---\nenforce: true\n"),
		[]byte(strings.Repeat("[", 10000)),
		[]byte(strings.Repeat("> ", 5000) + "- [ ] deep"),
		[]byte(strings.Repeat("  ", 3000) + "- [ ] indented"),
		[]byte("- [ ] " + strings.Repeat("x", 70000)),
		[]byte("\xef\xbb\xbf- [ ] bom\r\n- [X] crlf\r\n"),
		[]byte("- [ ] nul \x00 byte\n- [ ] bad \xff\xfe utf8\n"),
		[]byte("```\n- [ ] in code\n```\n"),
	}
}

// The helpers these fuzz targets share with the wires' (see apptest).
var (
	fuzzSupportFiles = apptest.FuzzSupportFiles
	writeFuzzApp     = apptest.WriteApp
	stackTrace       = apptest.StackTrace
	serveFuzz        = apptest.ServeRecorded
	checkErrorBody   = apptest.CheckErrorBody
	deleteThread     = apptest.DeleteThread
	checkLGSSE       = apptest.CheckLGSSE
)
