package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// openAIWire calls an OpenAI-wire chat completions endpoint (OpenAI, an
// openai-compatible server, Ollama's /v1) for the calls Dawn's agent
// makes: text and tool-call messages, tools, an optional temperature and
// token limit, streamed or not. It sends the bytes langchaingo's openai
// client (v0.1.14) sends, with the edits wireTransport makes to them (no
// temperature unless one was set, the prompt-cache key first), and reads
// the answer into the response that client returns. What it saves is that
// client's per-call work: compiling its model-capability regexps,
// encoding every tool's schema again, editing the encoded body, and a
// goroutine and a channel send per streamed event. A call it does not
// cover (see prepare) goes to the langchaingo client.
type openAIWire struct {
	client   *http.Client
	endpoint string // the base URL with /chat/completions
	token    string
	org      string // the OpenAI-Organization header, or ""
	model    string
	// cacheKey says the provider takes the prompt-cache key (OpenAI).
	cacheKey bool
	tools    toolCache
}

// noSystemModels are the model names langchaingo's client sends without
// system messages (folded into the first user message); their calls go to
// that client.
var noSystemModels = regexp.MustCompile(`(?i)^o[13](-mini|-preview)?$`)

// newOpenAIWire returns the fast path for an OpenAI-wire model, or nil for
// a model whose calls langchaingo's client rewrites.
func newOpenAIWire(client *http.Client, base, token, org, model string, cacheKey bool) *openAIWire {
	if model == "" {
		model = "gpt-3.5-turbo" // langchaingo's default
	}
	if noSystemModels.MatchString(model) {
		return nil
	}
	return &openAIWire{client: client, endpoint: strings.TrimSuffix(base, "/") + "/chat/completions", token: token, org: org, model: model, cacheKey: cacheKey}
}

// wireCall is what one call asks for, as the fast path reads its options.
type wireCall struct {
	tools       []llms.Tool
	stream      func(context.Context, []byte) error
	maxTokens   int
	temperature float64
	// setTemperature says the caller chose the temperature.
	setTemperature bool
}

// prepare reads options and reports whether the fast path covers a call
// of messages with them: the options Dawn's agent passes, and messages of
// one text each (the system prompt, the user's, the state block), the
// assistant's text and tool calls, and tool results.
func (w *openAIWire) prepare(messages []llms.MessageContent, options []llms.CallOption) (wireCall, bool) {
	o := llms.CallOptions{Temperature: unsetTemperature}
	for _, opt := range options {
		opt(&o)
	}
	if o.Model != "" || len(o.StopWords) > 0 || o.StreamingReasoningFunc != nil || o.N != 0 ||
		o.FrequencyPenalty != 0 || o.PresencePenalty != 0 || o.Seed != 0 || o.JSONMode ||
		o.ToolChoice != nil || len(o.Functions) > 0 || o.FunctionCallBehavior != "" || o.Metadata != nil {
		return wireCall{}, false
	}
	call := wireCall{tools: o.Tools, stream: o.StreamingFunc, maxTokens: o.MaxTokens}
	if o.Temperature != unsetTemperature {
		if math.IsNaN(o.Temperature) || math.IsInf(o.Temperature, 0) {
			return wireCall{}, false // langchaingo's encoder refuses it
		}
		call.temperature, call.setTemperature = o.Temperature, true
	}
	for _, t := range o.Tools {
		if t.Type != "function" || t.Function == nil {
			return wireCall{}, false
		}
	}
	for _, mc := range messages {
		if !wireMessageOK(mc) {
			return wireCall{}, false
		}
	}
	return call, true
}

// wireMessageOK reports whether the fast path encodes mc as langchaingo's
// client does.
func wireMessageOK(mc llms.MessageContent) bool {
	texts := 0
	for _, p := range mc.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			texts++
		case llms.ToolCall:
			if mc.Role != llms.ChatMessageTypeAI || p.FunctionCall == nil {
				return false
			}
		case llms.ToolCallResponse:
			if mc.Role != llms.ChatMessageTypeTool {
				return false
			}
		default:
			return false
		}
	}
	switch mc.Role {
	case llms.ChatMessageTypeSystem, llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI:
		return texts <= 1
	case llms.ChatMessageTypeTool:
		return len(mc.Parts) == 1 && texts == 0
	}
	return false
}

// generate makes the call. A held run waits for the answer here: the
// request is built and the answer read in functions of their own, so that
// this frame stays small (see checkedModel.generate).
func (w *openAIWire) generate(ctx context.Context, messages []llms.MessageContent, call wireCall) (*llms.ContentResponse, error) {
	req, err := w.request(ctx, messages, call)
	if err != nil {
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	return w.read(ctx, resp, call)
}

// request is the call's HTTP request.
func (w *openAIWire) request(ctx context.Context, messages []llms.MessageContent, call wireCall) (*http.Request, error) {
	key := ""
	if w.cacheKey {
		key, _ = ctx.Value(promptCacheKey{}).(string)
	}
	body, err := w.encode(key, messages, call)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+w.token)
	if w.org != "" {
		req.Header.Set("OpenAI-Organization", w.org)
	}
	return req, nil
}

// read reads the answer resp, and closes its body.
func (w *openAIWire) read(ctx context.Context, resp *http.Response, call wireCall) (*llms.ContentResponse, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusText(resp)
	}
	if call.stream != nil {
		return readStream(ctx, resp.Body, call.stream)
	}
	return readAnswer(resp.Body, resp.ContentLength)
}

// statusText is the error for an answer that is not 200, in the words of
// langchaingo's client (classify reads the status from them): the status,
// and the server's error message when its body has one.
func statusText(resp *http.Response) error {
	msg := fmt.Sprintf("API returned unexpected status code: %d", resp.StatusCode)
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", msg, body.Error.Message)
}

// transportError words a failed request as langchaingo's client does,
// without the request's details: its deadline, its cancellation, a
// network timeout, or a server that could not be reached.
func transportError(err error) error {
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return errors.New("request timeout: API call exceeded deadline")
	case errors.Is(err, context.Canceled):
		return errors.New("request cancelled")
	case errors.As(err, &netErr) && netErr.Timeout():
		return errors.New("request timeout: network operation exceeded timeout")
	}
	if _, ok := err.(net.Error); ok { // every error of http.Client.Do, a *url.Error
		return errors.New("network error: failed to reach API server")
	}
	return err
}

// errEmptyAnswer is langchaingo's client's error for an answer without
// choices.
var errEmptyAnswer = errors.New("empty response")
