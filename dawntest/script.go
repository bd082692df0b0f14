package dawntest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// ToolCall is one tool call a scripted turn makes. Args is marshaled to JSON;
// a string, []byte or json.RawMessage is taken as JSON text as is, and nil
// becomes {}.
type ToolCall struct {
	Name string
	Args any
}

// ScriptedModel is an llms.Model that answers each GenerateContent call with
// the next step of a script, and records what each call received. Build one
// with Script. It is safe for concurrent use; each call takes the next turn.
type ScriptedModel struct {
	mu       sync.Mutex
	turns    []turn
	waits    []<-chan struct{} // Wait steps not yet followed by a turn
	repeat   bool
	calls    int
	requests [][]llms.MessageContent
	tools    [][]llms.Tool
}

// turn is one scripted answer and what to wait for before giving it.
type turn struct {
	waits   []<-chan struct{}
	respond func(ctx context.Context, number int, msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error)
}

var _ llms.Model = (*ScriptedModel)(nil)

// Script returns a model with an empty script. Add turns with its methods.
func Script() *ScriptedModel { return &ScriptedModel{} }

// Reply adds a turn that answers with text. When the call has a streaming
// func, the text is streamed word by word first.
func (m *ScriptedModel) Reply(text string) *ScriptedModel {
	return m.ReplyAndCall(text)
}

// CallTool adds a turn that makes one tool call. args is marshaled to JSON as
// ToolCall.Args is.
func (m *ScriptedModel) CallTool(name string, args any) *ScriptedModel {
	return m.ReplyAndCall("", ToolCall{Name: name, Args: args})
}

// CallTools adds a turn that makes several tool calls at once.
func (m *ScriptedModel) CallTools(calls ...ToolCall) *ScriptedModel {
	return m.ReplyAndCall("", calls...)
}

// ReplyAndCall adds a turn that says text (streamed as Reply does) and makes
// the given tool calls in the same answer, as real models sometimes do.
func (m *ScriptedModel) ReplyAndCall(text string, calls ...ToolCall) *ScriptedModel {
	args := make([]string, len(calls))
	var argsErr error
	for i, c := range calls {
		var err error
		if args[i], err = argsJSON(c.Args); err != nil && argsErr == nil {
			argsErr = fmt.Errorf("arguments of tool call %d (%s): %w", i, c.Name, err)
		}
	}
	return m.add(func(ctx context.Context, number int, _ []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		if argsErr != nil {
			return nil, fmt.Errorf("dawntest: turn %d: %w", number, argsErr)
		}
		if err := streamWords(ctx, text, opts.StreamingFunc); err != nil {
			return nil, err
		}
		choice := &llms.ContentChoice{Content: text, StopReason: "stop"}
		for i, c := range calls {
			call := llms.ToolCall{
				ID:           "call_" + strconv.Itoa(number) + "_" + strconv.Itoa(i),
				Type:         "function",
				FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: args[i]},
			}
			choice.ToolCalls = append(choice.ToolCalls, call)
		}
		if len(choice.ToolCalls) > 0 {
			choice.StopReason = "tool_calls"
			choice.FuncCall = choice.ToolCalls[0].FunctionCall
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
	})
}

// Fail adds a turn on which GenerateContent returns err.
func (m *ScriptedModel) Fail(err error) *ScriptedModel {
	return m.add(func(context.Context, int, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		return nil, err
	})
}

// Then adds a turn answered by fn, which gets the call's messages and options.
func (m *ScriptedModel) Then(fn func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error)) *ScriptedModel {
	return m.add(func(_ context.Context, _ int, msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		return fn(msgs, opts)
	})
}

// Wait makes the next turn block until ch is closed before it answers. If the
// call's context ends first, GenerateContent returns the context's error. Use
// it to hold a run in flight, for example to test cancellation.
func (m *ScriptedModel) Wait(ch <-chan struct{}) *ScriptedModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waits = append(m.waits, ch)
	return m
}

// Repeat makes the last turn answer every call after the script ends, instead
// of the "script exhausted" error. Use it to test turn limits.
func (m *ScriptedModel) Repeat() *ScriptedModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.repeat = true
	return m
}

func (m *ScriptedModel) add(respond func(context.Context, int, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error)) *ScriptedModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns = append(m.turns, turn{waits: m.waits, respond: respond})
	m.waits = nil
	return m
}

// GenerateContent records the call and answers with the next turn of the
// script.
func (m *ScriptedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, opt := range options {
		opt(&opts)
	}
	m.mu.Lock()
	m.calls++
	number := m.calls
	m.requests = append(m.requests, copyMessages(messages))
	m.tools = append(m.tools, slices.Clone(opts.Tools))
	next, ok := m.turnFor(number)
	trailing, scripted := m.waits, len(m.turns)
	m.mu.Unlock()

	if !ok {
		if err := waitAll(ctx, trailing); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("dawntest: script exhausted after %d turns (this is call %d); add a step, or end the script with Repeat()", scripted, number)
	}
	if err := waitAll(ctx, next.waits); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return next.respond(ctx, number, messages, opts)
}

// turnFor returns the turn that answers call number (1-based). m.mu is held.
func (m *ScriptedModel) turnFor(number int) (turn, bool) {
	switch {
	case number <= len(m.turns):
		return m.turns[number-1], true
	case m.repeat && len(m.turns) > 0:
		return m.turns[len(m.turns)-1], true
	}
	return turn{}, false
}

// Call answers a single prompt with the next turn.
func (m *ScriptedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// Calls returns how many GenerateContent calls have happened.
func (m *ScriptedModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Requests returns a copy of the messages each call received, in call order.
func (m *ScriptedModel) Requests() [][]llms.MessageContent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]llms.MessageContent, len(m.requests))
	for i, msgs := range m.requests {
		out[i] = copyMessages(msgs)
	}
	return out
}

// Tools returns a copy of the tools offered on each call, in call order.
func (m *ScriptedModel) Tools() [][]llms.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]llms.Tool, len(m.tools))
	for i, tools := range m.tools {
		out[i] = slices.Clone(tools)
	}
	return out
}

func copyMessages(msgs []llms.MessageContent) []llms.MessageContent {
	out := make([]llms.MessageContent, len(msgs))
	for i, mc := range msgs {
		out[i] = llms.MessageContent{Role: mc.Role, Parts: slices.Clone(mc.Parts)}
	}
	return out
}

func waitAll(ctx context.Context, chans []<-chan struct{}) error {
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// streamWords sends text to fn one word (with its trailing space) at a time.
func streamWords(ctx context.Context, text string, fn func(context.Context, []byte) error) error {
	if fn == nil || text == "" {
		return nil
	}
	for _, word := range strings.SplitAfter(text, " ") {
		if word == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, []byte(word)); err != nil {
			return err
		}
	}
	return nil
}

func argsJSON(args any) (string, error) {
	var raw []byte
	switch a := args.(type) {
	case nil:
		return "{}", nil
	case string:
		raw = []byte(a)
	case []byte:
		raw = a
	case json.RawMessage:
		raw = a
	default:
		data, err := json.Marshal(args)
		if err != nil {
			return "", err
		}
		return string(data), nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("%q is not valid JSON", raw)
	}
	return string(raw), nil
}
