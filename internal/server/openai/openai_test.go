package openai_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/tmc/langchaingo/llms"
)

// post sends a chat-completion request, with headers as name, value pairs.
func post(t *testing.T, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type completion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

type oaError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decode[T any](t *testing.T, resp *http.Response, status int) T {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, data)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("body is not the JSON expected: %v: %s", err, data)
	}
	return v
}

// readChunks reads a chat.completion.chunk stream as the OpenAI SDKs do:
// each "data:" line is one event, up to "data: [DONE]", which must end it.
func readChunks(t *testing.T, resp *http.Response) []completion {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("content type %q, status %d: %s", ct, resp.StatusCode, data)
	}
	var out []completion
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if done {
			t.Fatalf("event after [DONE]: %s", data)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c completion
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk is not JSON: %v: %s", err, data)
		}
		out = append(out, c)
	}
	if !done {
		t.Fatalf("the stream did not end with data: [DONE]; got %d chunks", len(out))
	}
	return out
}

func threadCount(t *testing.T, h *apptest.Harness) int {
	t.Helper()
	n, err := h.Store.CountThreads(context.Background(), store.ThreadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCompletion(t *testing.T) {
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Reply("Hello from acme support."), apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url, `{"model":"support/acme","messages":[{"role":"user","content":"Hi"}]}`)
	if got := resp.Header.Get("Dawn-Thread-Id"); got != "" {
		t.Errorf("a stateless request answered Dawn-Thread-Id %q", got)
	}
	c := decode[completion](t, resp, http.StatusOK)
	if c.Object != "chat.completion" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Model != "support/acme" || c.Created == 0 {
		t.Errorf("completion = %+v", c)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Role != "assistant" || c.Choices[0].Message.Content != "Hello from acme support." ||
		c.Choices[0].FinishReason == nil || *c.Choices[0].FinishReason != "stop" {
		t.Fatalf("choices = %+v", c.Choices)
	}
	if n := threadCount(t, h); n != 0 {
		t.Errorf("a stateless request left %d threads; its throwaway thread should be deleted", n)
	}
}

func TestCompletionStream(t *testing.T) {
	const answer = "Your order ships on Monday."
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Reply(answer), apptest.Options{})
	url := h.Serve(t)
	chunks := readChunks(t, post(t, url, `{"model":"/support/[tenant]","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"When?"}]}]}`))
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want the role, text and the end: %+v", len(chunks), chunks)
	}
	var text strings.Builder
	for i, c := range chunks {
		if c.Object != "chat.completion.chunk" || c.ID != chunks[0].ID || c.Model != "/support/[tenant]" || len(c.Choices) != 1 {
			t.Fatalf("chunk %d = %+v", i, c)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		last := i == len(chunks)-1
		if fr := c.Choices[0].FinishReason; (fr != nil) != last || last && *fr != "stop" {
			t.Errorf("chunk %d finish_reason = %v; only the last has one, \"stop\"", i, fr)
		}
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first delta = %+v, want the role", chunks[0].Choices[0].Delta)
	}
	if text.String() != answer {
		t.Errorf("streamed text %q, want %q", text.String(), answer)
	}
	if len(chunks) < 4 {
		t.Errorf("the answer came in %d chunks: it should stream word by word", len(chunks)-2)
	}
}

func TestModels(t *testing.T) {
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	list := decode[struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}](t, resp, http.StatusOK)
	var ids []string
	for _, m := range list.Data {
		if m.Object != "model" || m.OwnedBy != "dawn" {
			t.Errorf("model %+v", m)
		}
		ids = append(ids, m.ID)
	}
	if list.Object != "list" || strings.Join(ids, ",") != "plain,research,support/[tenant]" {
		t.Errorf("models = %s %v, want the three routes that are not subagents", list.Object, ids)
	}
	resp, err = http.Get(url + "/v1/models/support/acme")
	if err != nil {
		t.Fatal(err)
	}
	if m := decode[map[string]any](t, resp, http.StatusOK); m["id"] != "support/[tenant]" {
		t.Errorf("GET /v1/models/support/acme = %v", m)
	}
}

func TestErrors(t *testing.T) {
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	url := h.Serve(t)
	cases := []struct {
		name, body, header string
		status             int
		typ, code, param   string
	}{
		{"unknown model", `{"model":"nope","messages":[{"role":"user","content":"Hi"}]}`, "", 404, "invalid_request_error", "model_not_found", "model"},
		{"subagent", `{"model":"research/subagents/researcher","messages":[{"role":"user","content":"Hi"}]}`, "", 404, "invalid_request_error", "model_not_found", "model"},
		{"no model", `{"messages":[{"role":"user","content":"Hi"}]}`, "", 400, "invalid_request_error", "invalid_value", "model"},
		{"no messages", `{"model":"plain"}`, "", 400, "invalid_request_error", "invalid_value", "messages"},
		{"no user message", `{"model":"plain","messages":[{"role":"system","content":"Be brief."}]}`, "", 400, "invalid_request_error", "invalid_value", "messages"},
		{"bad role", `{"model":"plain","messages":[{"role":"robot","content":"Hi"}]}`, "", 400, "invalid_request_error", "invalid_value", "messages[0].role"},
		{"image part", `{"model":"plain","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, "", 400, "invalid_request_error", "invalid_value", "messages[0].content"},
		{"null user content", `{"model":"plain","messages":[{"role":"user","content":null}]}`, "", 400, "invalid_request_error", "invalid_value", "messages[0].content"},
		{"no user content", `{"model":"plain","messages":[{"role":"system","content":"Be brief."},{"role":"user"}]}`, "", 400, "invalid_request_error", "invalid_value", "messages[1].content"},
		{"n", `{"model":"plain","n":2,"messages":[{"role":"user","content":"Hi"}]}`, "", 400, "invalid_request_error", "invalid_value", "n"},
		{"tools", `{"model":"plain","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"Hi"}]}`, "", 400, "invalid_request_error", "invalid_value", "tools"},
		{"thread header", `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`, "a/b", 400, "invalid_request_error", "invalid_value", "Dawn-Thread-Id header"},
		{"thread metadata", `{"model":"plain","metadata":{"thread_id":7},"messages":[{"role":"user","content":"Hi"}]}`, "", 400, "invalid_request_error", "invalid_value", "metadata.thread_id"},
		{"not JSON", `{"model":`, "", 400, "invalid_request_error", "invalid_body", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.header != "" {
				headers = []string{"Dawn-Thread-Id", tc.header}
			}
			e := decode[oaError](t, post(t, url, tc.body, headers...), tc.status).Error
			param := ""
			if e.Param != nil {
				param = *e.Param
			}
			if e.Type != tc.typ || e.Code == nil || *e.Code != tc.code || param != tc.param || e.Message == "" {
				t.Errorf("error = {type %q, code %v, param %q, message %q}, want {%q, %q, %q}", e.Type, deref(e.Code), param, e.Message, tc.typ, tc.code, tc.param)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestThreadKept: two requests naming one thread are one conversation: the
// second run's model sees the first exchange, though the client sends only
// its new message.
func TestThreadKept(t *testing.T) {
	model := dawntest.Script().Reply("Noted: your name is Ada.").Reply("Your name is Ada.")
	h := apptest.New(t, apptest.SupportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url, `{"model":"plain","messages":[{"role":"user","content":"My name is Ada."}]}`, "Dawn-Thread-Id", "chat-1")
	if got := resp.Header.Get("Dawn-Thread-Id"); got != "chat-1" {
		t.Errorf("Dawn-Thread-Id = %q, want chat-1", got)
	}
	decode[completion](t, resp, http.StatusOK)
	c := decode[completion](t, post(t, url, `{"model":"plain","metadata":{"thread_id":"chat-1"},"messages":[{"role":"user","content":"What is my name?"}]}`), http.StatusOK)
	if c.Choices[0].Message.Content != "Your name is Ada." {
		t.Errorf("second answer %q", c.Choices[0].Message.Content)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if !sent(reqs[1], llms.ChatMessageTypeHuman, "My name is Ada.") || !sent(reqs[1], llms.ChatMessageTypeAI, "Noted: your name is Ada.") {
		t.Errorf("the second run's model did not see the first exchange: %v", reqs[1])
	}
	if _, err := h.Store.GetThread(context.Background(), "chat-1"); err != nil {
		t.Errorf("the named thread was not kept: %v", err)
	}
}

// TestStatelessHistory: a request that names no thread brings its earlier
// messages with it, and the model sees them.
func TestStatelessHistory(t *testing.T) {
	model := dawntest.Script().Reply("Your name is Ada.")
	h := apptest.New(t, apptest.SupportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	decode[completion](t, post(t, url, `{"model":"plain","messages":[
		{"role":"system","content":"Answer in one sentence."},
		{"role":"user","content":"My name is Ada."},
		{"role":"assistant","content":"Hello Ada."},
		{"role":"user","content":"What is my name?"}]}`), http.StatusOK)
	req := model.Requests()[0]
	if !sent(req, llms.ChatMessageTypeSystem, "Answer in one sentence.") || !sent(req, llms.ChatMessageTypeSystem, "user: My name is Ada.") ||
		!sent(req, llms.ChatMessageTypeSystem, "assistant: Hello Ada.") || !sent(req, llms.ChatMessageTypeHuman, "What is my name?") {
		t.Errorf("the model did not see the earlier messages: %v", req)
	}
	if n := threadCount(t, h); n != 0 {
		t.Errorf("%d threads left", n)
	}
}

// sent reports whether a message of role holding text is among msgs.
func sent(msgs []llms.MessageContent, role llms.ChatMessageType, text string) bool {
	for _, m := range msgs {
		if m.Role != role {
			continue
		}
		for _, p := range m.Parts {
			if tp, ok := p.(llms.TextContent); ok && strings.Contains(tp.Text, text) {
				return true
			}
		}
	}
	return false
}

// TestParked: a run that parks for approval answers with the interrupt
// in the message, finish_reason "stop", and the tool has not run.
func TestParked(t *testing.T) {
	ran := false
	tool := capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
		Version string `json:"version"`
	}) (string, error) {
		ran = true
		return "released", nil
	})}
	dir := apptest.WriteApp(t, map[string]string{"ops/agent.md": "---\napprove: [release]\n---\nYou release."})
	model := dawntest.Script().CallTool("release", map[string]string{"version": "1.2.0"}).Reply("Released.")
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{tool}})
	url := h.Serve(t)
	chunks := readChunks(t, post(t, url, `{"model":"ops","stream":true,"messages":[{"role":"user","content":"Release 1.2.0"}]}`, "Dawn-Thread-Id", "ops-1"))
	var text strings.Builder
	for _, c := range chunks {
		text.WriteString(c.Choices[0].Delta.Content)
	}
	last := chunks[len(chunks)-1].Choices[0].FinishReason
	if last == nil || *last != "stop" || !strings.Contains(text.String(), "release") || !strings.Contains(text.String(), "POST /threads/ops-1/resume") {
		t.Errorf("parked stream = %q, finish %v", text.String(), deref(last))
	}
	if ran {
		t.Error("the tool ran before anyone approved it")
	}
}

// usageModel answers "ok", reporting 11 prompt and 7 completion tokens.
func usageModel() *dawntest.ScriptedModel {
	return dawntest.Script().Then(func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok", StopReason: "stop", GenerationInfo: map[string]any{"PromptTokens": 11, "CompletionTokens": 7}}}}, nil
	}).Repeat()
}

// TestUsage: the model's token counts are the completion's usage, and the
// last chunk's when a stream asks for it.
func TestUsage(t *testing.T) {
	h := apptest.New(t, apptest.SupportApp(t), usageModel(), apptest.Options{})
	url := h.Serve(t)
	c := decode[struct {
		Usage *usageBody `json:"usage"`
	}](t, post(t, url, `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`), http.StatusOK)
	want := usageBody{PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18}
	if c.Usage == nil || *c.Usage != want {
		t.Errorf("usage = %+v, want %+v", c.Usage, want)
	}
	resp := post(t, url, `{"model":"plain","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var datas []string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			datas = append(datas, d)
		}
	}
	if len(datas) < 2 || datas[len(datas)-1] != "[DONE]" {
		t.Fatalf("stream = %v", datas)
	}
	var last struct {
		Choices []any      `json:"choices"`
		Usage   *usageBody `json:"usage"`
	}
	if err := json.Unmarshal([]byte(datas[len(datas)-2]), &last); err != nil || last.Choices == nil || len(last.Choices) != 0 || last.Usage == nil || *last.Usage != want {
		t.Errorf("last chunk before [DONE] = %s, want no choices and usage %+v", datas[len(datas)-2], want)
	}
}

type usageBody struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// TestAPIKey: with an API key, /v1 takes it as the OpenAI SDKs send it.
func TestAPIKey(t *testing.T) {
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{APIKey: "k-1"}))
	t.Cleanup(srv.Close)
	body := `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`
	if resp := post(t, srv.URL, body); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: status %d, want 401", resp.StatusCode)
	}
	if resp := post(t, srv.URL, body, "Authorization", "Bearer wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong key: status %d, want 401", resp.StatusCode)
	}
	c := decode[completion](t, post(t, srv.URL, body, "Authorization", "Bearer k-1"), http.StatusOK)
	if c.Choices[0].Message.Content != "ok" {
		t.Errorf("answer %+v", c.Choices)
	}
}

// TestRunFails: a model that fails is a 502 model_error in OpenAI's shape;
// in a stream that began, an event holding that error body, and no
// [DONE].
func TestRunFails(t *testing.T) {
	boom := errors.New("provider is down")
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Fail(boom).Fail(boom), apptest.Options{})
	url := h.Serve(t)
	body := `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`
	e := decode[oaError](t, post(t, url, body), http.StatusBadGateway).Error
	if deref(e.Code) != "model_error" || e.Type != "server_error" || !strings.Contains(e.Message, "provider is down") {
		t.Errorf("error = %+v", e)
	}
	resp := post(t, url, strings.Replace(body, `{"model"`, `{"stream":true,"model"`, 1))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(data)
	if strings.Contains(text, "[DONE]") || !strings.Contains(text, `data: {"error":{"message":`) || !strings.Contains(text, "provider is down") {
		t.Errorf("failed stream = %s", text)
	}
}

// TestThreadBusy: a request naming a thread whose run is still in flight
// is the core's 409 run_in_flight, in OpenAI's shape.
func TestThreadBusy(t *testing.T) {
	release := make(chan struct{})
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Wait(release).Reply("first"), apptest.Options{})
	url := h.Serve(t)
	body := `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`
	first := make(chan *http.Response, 1)
	go func() { first <- post(t, url, body, "Dawn-Thread-Id", "busy-1") }()
	waitActive(t, h, "busy-1")
	e := decode[oaError](t, post(t, url, body, "Dawn-Thread-Id", "busy-1"), http.StatusConflict).Error
	if deref(e.Code) != "run_in_flight" || e.Type != "invalid_request_error" || e.Message == "" {
		t.Errorf("error = %+v", e)
	}
	close(release)
	if c := decode[completion](t, <-first, http.StatusOK); c.Choices[0].Message.Content != "first" {
		t.Errorf("first answer %+v", c.Choices)
	}
}

// TestStreamClientLeaves: a client that leaves a stream cancels its run.
func TestStreamClientLeaves(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := apptest.New(t, apptest.SupportApp(t), dawntest.Script().Wait(release).Reply("late"), apptest.Options{})
	url := h.Serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"plain","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Dawn-Thread-Id", "leave-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	run := waitActive(t, h, "leave-1")
	cancel()
	resp.Body.Close()
	select {
	case <-run.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run went on after its client left")
	}
	if !run.Cancelled() {
		t.Errorf("the run ended with %v, not cancelled", run.Err())
	}
}

func waitActive(t *testing.T, h *apptest.Harness, threadID string) *runner.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r := h.Runs.Active(threadID); r != nil {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no run started on %s", threadID)
	return nil
}

// TestErrorsNameThisAppsRoutes: the hint of a missing or unknown model
// names a route of the app being served, not one of the example app.
func TestErrorsNameThisAppsRoutes(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"notes/agent.md": "You take notes."})
	h := apptest.New(t, dir, dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	url := h.Serve(t)
	for _, body := range []string{`{"model":"nope","messages":[{"role":"user","content":"Hi"}]}`, `{"messages":[{"role":"user","content":"Hi"}]}`} {
		resp := post(t, url, body)
		status := resp.StatusCode
		e := decode[oaError](t, resp, status).Error
		if !strings.Contains(e.Message, `like "notes"`) || strings.Contains(e.Message, "acme") {
			t.Errorf("%s: %d %q, want a hint naming the app's route notes", body, status, e.Message)
		}
	}
}
