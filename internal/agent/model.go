package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/routeprompt"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// SystemPrompt is the route's prompt, rendered as a template with params
// and state when it uses template syntax, followed by every capability's
// system prompt fragment (capabilities.Prepared.Prompts). It is the first
// message of every request, so it should not change from turn to turn:
// live state goes in the StateBlock after the conversation. A route prompt
// whose template reads state does change it when that state changes.
func SystemPrompt(p *capabilities.Prepared, params map[string]string, state thread.State, user string) (string, error) {
	prompt, err := routeprompt.Prompt(p.Route, params, state, user)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(prompt)
	for _, render := range p.Prompts {
		if frag := render(state); frag != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(frag)
		}
	}
	return b.String(), nil
}

// stateBlockHeading opens the per-turn state block.
const stateBlockHeading = "## Current state\n\n"

// StateBlock is the per-turn state block: every capability's state
// fragment (capabilities.Prepared.StatePrompts) rendered from state, or ""
// when none renders anything. It goes after the conversation as a final
// system message, rendered fresh for each model call and never saved, so
// that each request begins with the previous request's messages and a
// provider's prompt cache reuses them.
func StateBlock(p *capabilities.Prepared, state thread.State) string {
	var b strings.Builder
	for _, render := range p.StatePrompts {
		frag := render(state)
		if frag == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(stateBlockHeading)
		} else {
			b.WriteString("\n\n")
		}
		b.WriteString(frag)
	}
	return b.String()
}

// SamplingOptions are the call options every model call of the run
// carries: the temperature of agent.md, else of dawn.yaml. Only a
// temperature someone chose is sent; unset, the provider's default applies
// (see models).
func (c Config) SamplingOptions() []llms.CallOption {
	t := c.Route.Route.Agent.Temperature
	if t == nil {
		t = c.AppTemperature
	}
	if t == nil {
		return nil
	}
	return []llms.CallOption{llms.WithTemperature(*t)}
}

// generate calls the model. It returns the model's answer and the
// model_call event that reports the call, for the caller to emit after the
// answer's chunks and the gate's verdict on them (a client takes back the
// chunks right before an answer_rejected).
//
// A held run waits here for its model: the call is built and its answer
// read in functions of their own, so that this frame, on the waiting
// goroutine's stack, stays small (see RunWith).
func (l *loop) generate(ctx context.Context, msgs []thread.Message, state thread.State) (*llms.ContentChoice, stream.Event, error) {
	c, err := l.request(ctx, msgs, state)
	if err != nil {
		return nil, stream.Event{}, err
	}
	start := time.Now()
	resp, err := l.cfg.Model.GenerateContent(c.ctx, c.msgs, c.opts...)
	return l.answer(c.ctx, resp, err, time.Since(start))
}

// modelRequest is a model call ready to make.
type modelRequest struct {
	ctx  context.Context
	msgs []llms.MessageContent
	opts []llms.CallOption
}

// request builds the model call of a turn on msgs and state.
func (l *loop) request(ctx context.Context, msgs []thread.Message, state thread.State) (*modelRequest, error) {
	opts := l.cfg.SamplingOptions()
	if len(l.defs) > 0 {
		opts = append(opts, llms.WithTools(l.defs))
	}
	if l.cfg.Stream {
		opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) == 0 {
				return nil
			}
			l.emit(stream.Chunk(string(chunk)))
			return nil
		}))
	}
	// A retried or fallen-back model call shows each failed try.
	ctx = models.WithAttemptObserver(ctx, func(a models.Attempt) {
		l.emit(stream.New(stream.TypeModelRetry, a.EventData()))
	})
	ctx = models.WithAppTools(ctx, l.cfg.Route.AppTools())
	if l.cfg.Route.Route != nil {
		ctx = models.WithApprovalTools(ctx, l.cfg.Route.Route.Agent.Approve)
	}
	system, err := SystemPrompt(l.cfg.Route, l.cfg.Params, state, userOf(ctx))
	if err != nil {
		return nil, err
	}
	block := StateBlock(l.cfg.Route, state)
	if err := l.checkWindow(system, block, msgs); err != nil {
		return nil, err
	}
	return &modelRequest{ctx: ctx, msgs: withStateBlock(toLLM(system, msgs), block), opts: opts}, nil
}

// answer reads the model's answer to a call that took elapsed, or its
// error.
func (l *loop) answer(ctx context.Context, resp *llms.ContentResponse, err error, elapsed time.Duration) (*llms.ContentChoice, stream.Event, error) {
	if err != nil {
		if ctx.Err() != nil {
			return nil, stream.Event{}, ctx.Err()
		}
		return nil, stream.Event{}, &ModelError{Model: l.cfg.ModelName, Err: err}
	}
	// A client may end a stream cut off by ctx with the partial text and
	// no error (langchaingo's OpenAI client does): that is no answer.
	if err := ctx.Err(); err != nil {
		return nil, stream.Event{}, err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, stream.Event{}, &ModelError{Model: l.cfg.ModelName, Err: errors.New("the model returned no choices")}
	}
	return resp.Choices[0], stream.New(stream.TypeModelCall, modelCall(l.cfg.ModelName, elapsed, resp)), nil
}

// modelCallData is the data of a model_call event.
type modelCallData struct {
	Model       string `json:"model"`
	DurationMS  int64  `json:"duration_ms"`
	InputTokens *int64 `json:"input_tokens,omitempty"`
	// CachedInputTokens are the input tokens the provider read from its
	// prompt cache, when it says.
	CachedInputTokens *int64 `json:"cached_input_tokens,omitempty"`
	OutputTokens      *int64 `json:"output_tokens,omitempty"`
	FinishReason      string `json:"finish_reason,omitempty"`
}

// modelCall describes a model call that answered resp after elapsed; token
// counts the provider did not report are left out.
func modelCall(model string, elapsed time.Duration, resp *llms.ContentResponse) modelCallData {
	d := modelCallData{Model: model, DurationMS: elapsed.Milliseconds()}
	in, out, reasons := models.Usage(resp)
	if in >= 0 {
		d.InputTokens = &in
	}
	if out >= 0 {
		d.OutputTokens = &out
	}
	if len(reasons) > 0 {
		d.FinishReason = reasons[0]
	}
	if cached := models.CachedInputTokens(resp); cached >= 0 {
		d.CachedInputTokens = &cached
	}
	return d
}

// toolCalls returns the tool calls of the model's answer. Each call's Input
// is valid JSON: arguments that are not (a cut-off object, an empty string)
// are kept as the JSON string of their text, so the call can be streamed,
// saved and read back as it was made. bad holds, per call, why its
// arguments are not JSON, or nil.
func toolCalls(c *llms.ContentChoice) (calls []thread.ToolCall, bad []error) {
	add := func(id, name, args string) {
		input, err := toolInput(args)
		calls = append(calls, thread.ToolCall{ID: id, Name: name, Input: input})
		bad = append(bad, err)
	}
	for i, tc := range c.ToolCalls {
		if tc.FunctionCall == nil {
			continue
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		add(id, tc.FunctionCall.Name, tc.FunctionCall.Arguments)
	}
	if len(calls) == 0 && c.FuncCall != nil {
		add("call_0", c.FuncCall.Name, c.FuncCall.Arguments)
	}
	return calls, bad
}

// toolInput is a tool call's arguments as JSON: the arguments themselves
// when they are JSON, else the JSON string of their text and the reason
// they are not JSON.
func toolInput(args string) (json.RawMessage, error) {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args), nil
	}
	text, _ := json.Marshal(args) // a string always encodes
	if strings.TrimSpace(args) == "" {
		return text, errors.New("arguments are empty")
	}
	var v any
	return text, json.Unmarshal([]byte(args), &v) // says why
}
