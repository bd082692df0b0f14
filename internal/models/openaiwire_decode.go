package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// The answer types mirror langchaingo's client's (the same fields and
// types), so that an answer decodes here exactly when it decodes there.

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type wireToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function,omitempty"`
}

type wireFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireAnswer is a whole (not streamed) answer.
type wireAnswer struct {
	ID      string `json:"id,omitempty"`
	Created int64  `json:"created,omitempty"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role             string            `json:"role"`
			Content          string            `json:"content"`
			Name             string            `json:"name,omitempty"`
			ToolCalls        []wireToolCall    `json:"tool_calls,omitempty"`
			FunctionCall     *wireFunctionCall `json:"function_call,omitempty"`
			ToolCallID       string            `json:"tool_call_id,omitempty"`
			ReasoningContent string            `json:"reasoning_content,omitempty"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices,omitempty"`
	Model             string    `json:"model,omitempty"`
	Object            string    `json:"object,omitempty"`
	Usage             wireUsage `json:"usage,omitempty"`
	SystemFingerprint string    `json:"system_fingerprint"`
}

// wireEvent is one event of a streamed answer.
type wireEvent struct {
	ID      string  `json:"id,omitempty"`
	Created float64 `json:"created,omitempty"`
	Model   string  `json:"model,omitempty"`
	Object  string  `json:"object,omitempty"`
	Choices []struct {
		Index float64 `json:"index,omitempty"`
		Delta struct {
			Role             string            `json:"role,omitempty"`
			Content          string            `json:"content,omitempty"`
			FunctionCall     *wireFunctionCall `json:"function_call,omitempty"`
			ToolCalls        []*wireToolCall   `json:"tool_calls,omitempty"`
			ReasoningContent string            `json:"reasoning_content,omitempty"`
		} `json:"delta,omitempty"`
		FinishReason string `json:"finish_reason,omitempty"`
	} `json:"choices,omitempty"`
	SystemFingerprint string     `json:"system_fingerprint"`
	Usage             *wireUsage `json:"usage,omitempty"`
}

// decodeFirst decodes the first JSON value of data into v, as a
// json.Decoder does (trailing bytes ignored), without the Decoder's
// buffer when data is one value. v must be a new value: after a failed
// Unmarshal the Decoder decodes into it again.
func decodeFirst(data []byte, v any) error {
	if json.Unmarshal(data, v) == nil {
		return nil
	}
	return json.NewDecoder(bytes.NewReader(data)).Decode(v)
}

// readAnswer reads a whole answer.
func readAnswer(body io.Reader, size int64) (*llms.ContentResponse, error) {
	var buf bytes.Buffer
	if size > 0 && size < 64<<20 {
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	var a wireAnswer
	if err := decodeFirst(data, &a); err != nil {
		return nil, err
	}
	if len(a.Choices) == 0 {
		return nil, errEmptyAnswer
	}
	resp := &llms.ContentResponse{Choices: make([]*llms.ContentChoice, len(a.Choices))}
	for i, c := range a.Choices {
		choice := &llms.ContentChoice{
			Content:          c.Message.Content,
			ReasoningContent: c.Message.ReasoningContent,
			StopReason:       c.FinishReason,
			GenerationInfo:   generationInfo(&a.Usage, c.Message.ReasoningContent),
		}
		if c.FinishReason == "function_call" && c.Message.FunctionCall != nil {
			choice.FuncCall = &llms.FunctionCall{Name: c.Message.FunctionCall.Name, Arguments: c.Message.FunctionCall.Arguments}
		}
		for _, t := range c.Message.ToolCalls {
			choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{
				ID:           t.ID,
				Type:         t.Type,
				FunctionCall: &llms.FunctionCall{Name: t.Function.Name, Arguments: t.Function.Arguments},
			})
		}
		if len(choice.ToolCalls) > 0 {
			choice.FuncCall = choice.ToolCalls[0].FunctionCall
		}
		resp.Choices[i] = choice
	}
	return resp, nil
}

// generationInfo is a choice's GenerationInfo as langchaingo's client
// fills it.
func generationInfo(u *wireUsage, reasoning string) map[string]any {
	return map[string]any{
		"CompletionTokens":                   u.CompletionTokens,
		"PromptTokens":                       u.PromptTokens,
		"TotalTokens":                        u.TotalTokens,
		"ReasoningTokens":                    u.CompletionTokensDetails.ReasoningTokens,
		"PromptAudioTokens":                  u.PromptTokensDetails.AudioTokens,
		"ThinkingContent":                    reasoning,
		"ThinkingTokens":                     u.CompletionTokensDetails.ReasoningTokens,
		"PromptCachedTokens":                 u.PromptTokensDetails.CachedTokens,
		"CompletionAudioTokens":              u.CompletionTokensDetails.AudioTokens,
		"CompletionReasoningTokens":          u.CompletionTokensDetails.ReasoningTokens,
		"CompletionAcceptedPredictionTokens": u.CompletionTokensDetails.AcceptedPredictionTokens,
		"CompletionRejectedPredictionTokens": u.CompletionTokensDetails.RejectedPredictionTokens,
	}
}

// streamedCall is a tool call being joined from a stream's deltas.
type streamedCall struct {
	id, typ, name string
	args          strings.Builder
}

// wireStream joins the events of a streamed answer.
type wireStream struct {
	text, reasoning strings.Builder
	finish          string
	calls           []*streamedCall
	usage           wireUsage
}

// add takes one event, as langchaingo's client joins it: its usage, and
// from its first choice the text, the reasoning, the finish reason (the
// last event's, even when empty) and the tool calls (a delta with
// arguments and no type continues the last call; any other starts one).
// It returns the text the event carried.
func (a *wireStream) add(ev *wireEvent) string {
	if ev.Usage != nil {
		a.usage = *ev.Usage
	}
	if len(ev.Choices) == 0 {
		return ""
	}
	c := &ev.Choices[0]
	a.text.WriteString(c.Delta.Content)
	a.reasoning.WriteString(c.Delta.ReasoningContent)
	a.finish = c.FinishReason
	for _, t := range c.Delta.ToolCalls {
		if t == nil {
			continue
		}
		if t.Type == "" && t.Function.Arguments != "" {
			if len(a.calls) > 0 {
				a.calls[len(a.calls)-1].args.WriteString(t.Function.Arguments)
			}
			continue
		}
		call := &streamedCall{id: t.ID, typ: t.Type, name: t.Function.Name}
		call.args.WriteString(t.Function.Arguments)
		a.calls = append(a.calls, call)
	}
	if len(c.Delta.ToolCalls) > 0 {
		return "" // the text of an event with tool calls is not streamed
	}
	return c.Delta.Content
}

// response is the joined answer.
func (a *wireStream) response() *llms.ContentResponse {
	reasoning := a.reasoning.String()
	choice := &llms.ContentChoice{
		Content:          a.text.String(),
		ReasoningContent: reasoning,
		StopReason:       a.finish,
		GenerationInfo:   generationInfo(&a.usage, reasoning),
	}
	for _, c := range a.calls {
		choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{
			ID:           c.id,
			Type:         c.typ,
			FunctionCall: &llms.FunctionCall{Name: c.name, Arguments: c.args.String()},
		})
	}
	if len(choice.ToolCalls) > 0 {
		choice.FuncCall = choice.ToolCalls[0].FunctionCall
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}
}

// readStream reads a streamed answer's server-sent events on the caller's
// goroutine, handing stream each piece of text as it arrives, up to
// "data: [DONE]" or the end of the body. Lines that are not data, and
// data that is not an event, are skipped.
func readStream(ctx context.Context, body io.Reader, stream func(context.Context, []byte) error) (*llms.ContentResponse, error) {
	r := bufio.NewReaderSize(body, 4096)
	var a wireStream
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: copy it out, read the rest.
			long := append([]byte(nil), line...)
			var rest []byte
			rest, err = r.ReadBytes('\n')
			line = append(long, rest...)
		}
		done, serr := a.line(ctx, line, stream)
		if serr != nil {
			return nil, serr
		}
		if done {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("error reading streaming response: %w", err)
		}
	}
	return a.response(), nil
}

// line takes one line of the stream, reporting whether it ends it.
func (a *wireStream) line(ctx context.Context, line []byte, stream func(context.Context, []byte) error) (bool, error) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok {
		return false, nil
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		return true, nil
	}
	var ev wireEvent
	if decodeFirst(data, &ev) != nil {
		return false, nil
	}
	text := a.add(&ev)
	if text == "" {
		return false, nil
	}
	if err := stream(ctx, []byte(text)); err != nil {
		return false, fmt.Errorf("streaming func returned an error: %w", err)
	}
	return false, nil
}
