package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// geminiModel speaks Google's Gemini REST API (generateContent and, when
// streaming, streamGenerateContent?alt=sse) over plain HTTP. langchaingo's
// googleai client needs the whole Google Cloud client stack and streams with
// a JSON-array encoding that OpenAI-style mocks do not speak; the REST
// protocol itself is small.
type geminiModel struct {
	client  *http.Client
	baseURL string // without a trailing slash, for example https://generativelanguage.googleapis.com/v1beta
	key     string
	model   string
}

type geminiPart struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
}

type geminiCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
	Tools             []geminiTools   `json:"tools,omitempty"`
	GenerationConfig  map[string]any  `json:"generationConfig,omitempty"`
}

type geminiTools struct {
	FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
}

type geminiFunction struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters,omitempty"`
}

type geminiAnswer struct {
	Candidates []struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata map[string]any `json:"usageMetadata"`
	Error         *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// GenerateContent sends messages to Gemini and returns its answer.
func (g *geminiModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	req, err := geminiBody(messages, o)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	method := ":generateContent"
	if o.StreamingFunc != nil {
		method = ":streamGenerateContent?alt=sse"
	}
	endpoint := g.baseURL + "/models/" + url.PathEscape(g.model) + method
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("x-goog-api-key", g.key)
	resp, err := g.client.Do(httpReq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		msg := strings.TrimSpace(string(text))
		var a geminiAnswer
		if json.Unmarshal(text, &a) == nil && a.Error != nil {
			msg = a.Error.Message
		}
		// The wording classify reads the status from.
		return nil, fmt.Errorf("API returned unexpected status code: %d: %s", resp.StatusCode, msg)
	}
	var acc geminiAccumulator
	if o.StreamingFunc == nil {
		var a geminiAnswer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		acc.add(a)
		return acc.response(), nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var a geminiAnswer
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &a); err != nil {
			return nil, fmt.Errorf("reading the streamed answer: %w", err)
		}
		if a.Error != nil {
			return nil, fmt.Errorf("the stream ended with an error: %d: %s", a.Error.Code, a.Error.Message)
		}
		for _, text := range acc.add(a) {
			if err := o.StreamingFunc(ctx, []byte(text)); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the streamed answer: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return acc.response(), nil
}

// Call generates text for a single prompt.
func (g *geminiModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, g, prompt, options...)
}

// geminiBody translates langchaingo messages: system text becomes the
// system instruction, AI turns the "model" role, and each tool result a
// functionResponse part in a "user" turn; then the tools and the
// generation settings.
func geminiBody(messages []llms.MessageContent, o llms.CallOptions) (geminiRequest, error) {
	var req geminiRequest
	for _, mc := range messages {
		parts, err := geminiParts(mc.Parts)
		if err != nil {
			return req, err
		}
		if len(parts) == 0 {
			continue
		}
		switch mc.Role {
		case llms.ChatMessageTypeSystem:
			if req.SystemInstruction == nil {
				req.SystemInstruction = &geminiContent{}
			}
			req.SystemInstruction.Parts = append(req.SystemInstruction.Parts, parts...)
		case llms.ChatMessageTypeAI:
			req.Contents = append(req.Contents, geminiContent{Role: "model", Parts: parts})
		default: // human, generic and tool results
			req.Contents = append(req.Contents, geminiContent{Role: "user", Parts: parts})
		}
	}
	req.Tools = geminiToolList(o.Tools)
	req.GenerationConfig = geminiConfig(o)
	return req, nil
}

// geminiParts translates the parts of one message; empty text and tool
// calls without a function are left out.
func geminiParts(in []llms.ContentPart) ([]geminiPart, error) {
	var parts []geminiPart
	for _, p := range in {
		switch p := p.(type) {
		case llms.TextContent:
			if p.Text != "" {
				parts = append(parts, geminiPart{Text: p.Text})
			}
		case llms.ToolCall:
			if p.FunctionCall == nil {
				continue
			}
			args := json.RawMessage(p.FunctionCall.Arguments)
			if !json.Valid(args) || strings.TrimSpace(p.FunctionCall.Arguments) == "" {
				args = json.RawMessage(`{}`)
			}
			parts = append(parts, geminiPart{FunctionCall: &geminiCall{Name: p.FunctionCall.Name, Args: args}})
		case llms.ToolCallResponse:
			var v any
			if json.Unmarshal([]byte(p.Content), &v) != nil {
				v = p.Content
			}
			parts = append(parts, geminiPart{FunctionResponse: &geminiResponse{Name: p.Name, Response: map[string]any{"name": p.Name, "content": v}}})
		default:
			return nil, fmt.Errorf("gemini: message part %T is not supported", p)
		}
	}
	return parts, nil
}

// geminiToolList declares the function tools, or nil for none.
func geminiToolList(tools []llms.Tool) []geminiTools {
	if len(tools) == 0 {
		return nil
	}
	var decls []geminiFunction
	for _, t := range tools {
		if t.Function != nil {
			decls = append(decls, geminiFunction{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	return []geminiTools{{FunctionDeclarations: decls}}
}

// geminiConfig is the generationConfig the options set, or nil.
func geminiConfig(o llms.CallOptions) map[string]any {
	cfg := map[string]any{}
	if o.Temperature != 0 {
		cfg["temperature"] = o.Temperature
	}
	if o.MaxTokens > 0 {
		cfg["maxOutputTokens"] = o.MaxTokens
	}
	if len(cfg) == 0 {
		return nil
	}
	return cfg
}

// geminiAccumulator joins the pieces of a (streamed) answer.
type geminiAccumulator struct {
	text   strings.Builder
	calls  []llms.ToolCall
	reason string
	usage  map[string]any
}

// add takes one answer or stream piece and returns its new text parts.
func (acc *geminiAccumulator) add(a geminiAnswer) []string {
	if a.UsageMetadata != nil {
		acc.usage = a.UsageMetadata
	}
	if len(a.Candidates) == 0 {
		return nil
	}
	c := a.Candidates[0]
	if c.FinishReason != "" {
		acc.reason = c.FinishReason
	}
	var texts []string
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args := string(p.FunctionCall.Args)
			if args == "" {
				args = "{}"
			}
			acc.calls = append(acc.calls, llms.ToolCall{
				ID:           fmt.Sprintf("call_%d", len(acc.calls)),
				Type:         "function",
				FunctionCall: &llms.FunctionCall{Name: p.FunctionCall.Name, Arguments: args},
			})
		case p.Text != "":
			acc.text.WriteString(p.Text)
			texts = append(texts, p.Text)
		}
	}
	return texts
}

func (acc *geminiAccumulator) response() *llms.ContentResponse {
	if acc.text.Len() == 0 && len(acc.calls) == 0 && acc.reason == "" {
		return &llms.ContentResponse{}
	}
	choice := &llms.ContentChoice{Content: acc.text.String(), StopReason: acc.reason, ToolCalls: acc.calls}
	if len(acc.calls) > 0 {
		choice.FuncCall = acc.calls[0].FunctionCall
	}
	if acc.usage != nil {
		choice.GenerationInfo = map[string]any{"usage": acc.usage}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}
}
