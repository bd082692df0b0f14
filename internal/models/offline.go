package models

import (
	"context"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/tmc/langchaingo/llms"
)

// offlineTaskTool is the subagent tool the offline model calls first.
const offlineTaskTool = capabilities.ReservedToolName

// offlineModel is the built-in deterministic model. It has no state: every
// answer follows from the messages and the tools of the call.
type offlineModel struct{}

// NewOffline returns the built-in model that needs no network. Per call it
// (1) hands the user's text to the first subagent once, when a "task" tool is
// offered; else (2) makes the next call a capability scripts for it
// (capabilities.OfflineScripter, such as a plan's next step; see
// WithMarkers), or the next app tool call when the capability asks for it
// (a plan calls one app tool per item, while the item is in progress);
// else (3) calls the next app tool the call offers, in name order, that it
// has not called since the user last spoke (app tools are those the
// context names, see WithAppTools), with arguments built from its schema
// (see argsFromSchema); else (4) answers with a short text quoting each app
// tool's result, streamed in a few chunks. It never calls a tool a person
// must approve (see WithApprovalTools) and names those it skipped in its
// answer. The
// same messages always give the same answer.
func NewOffline() llms.Model { return offlineModel{} }

// GenerateContent answers one model turn: a capability's scripted reply,
// else the task call, else a capability's scripted call, else the next app
// tool call, else the answer. The scripts come from ctx (see WithMarkers).
func (offlineModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts llms.CallOptions
	for _, opt := range options {
		opt(&opts)
	}
	help := scriptsFrom(ctx)
	t := readTranscript(messages, help)
	nextID := "call_offline_" + strconv.Itoa(t.toolCalls+1)

	if t.reply != "" {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: t.reply, StopReason: "stop"}}}, nil
	}
	if task := findTool(opts.Tools, offlineTaskTool); task != nil && !t.taskCalled {
		if subagent, ok := firstEnum(task.Parameters, "subagent"); ok {
			args := marshalArgs(map[string]string{"subagent": subagent, "input": t.lastUser})
			return toolCallResponse(nextID, offlineTaskTool, args), nil
		}
	}
	appTools := appToolsFrom(ctx)
	callable, skipped := offeredAppTools(opts.Tools, appTools, approvalToolsFrom(ctx))
	step := help.step(t.forScripters(opts.Tools, callable))
	if step.Tool != "" {
		return toolCallResponse(nextID, step.Tool, step.Arguments), nil
	}
	if call := t.nextAppTool(nextID, opts.Tools, callable); call != nil {
		return call, nil
	}
	text := offlineAnswer(t, step.Summary, t.appToolResults(appTools), skipped)
	if err := streamWords(ctx, opts.StreamingFunc, text); err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "stop"}}}, nil
}

// streamWords hands text to stream (when set) a few words at a time.
func streamWords(ctx context.Context, stream func(context.Context, []byte) error, text string) error {
	if stream == nil {
		return nil
	}
	for _, chunk := range splitWords(text, 4) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := stream(ctx, []byte(chunk)); err != nil {
			return err
		}
	}
	return nil
}

// Call answers a single prompt.
func (m offlineModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func toolCallResponse(id, name, args string) *llms.ContentResponse {
	call := &llms.FunctionCall{Name: name, Arguments: args}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		StopReason: "tool_calls",
		FuncCall:   call,
		ToolCalls:  []llms.ToolCall{{ID: id, Type: "function", FunctionCall: call}},
	}}}
}

func findTool(tools []llms.Tool, name string) *llms.FunctionDefinition {
	for _, tool := range tools {
		if tool.Function != nil && tool.Function.Name == name {
			return tool.Function
		}
	}
	return nil
}

// offlineAnswer is the final text: what was done (summary, a scripting
// capability's sentence, else what was received), the app tools' results,
// the tools skipped because a person must approve them, and how to get a
// real model.
func offlineAnswer(t transcript, summary string, results []toolResult, skipped []string) string {
	var b strings.Builder
	b.WriteString("Offline model: ")
	if summary == "" {
		summary = "received " + strconv.Quote(shorten(t.lastUser, 80)) + "."
	}
	b.WriteString(summary)
	if t.taskCalled && t.taskAnswer != "" {
		b.WriteString(" The " + strconv.Quote(t.taskSubagent) + " subagent answered: " + strconv.Quote(shorten(t.taskAnswer, 80)) + ".")
	}
	b.WriteString(quoteResults(results))
	if len(skipped) > 0 {
		b.WriteString(" Skipped " + strings.Join(skipped, ", ") + ": a person must approve each call, and the offline model calls no such tool.")
	}
	b.WriteString(" Set DAWN_MODEL (for example openai:gpt-4o-mini) to use a real model.")
	return b.String()
}

// shorten collapses white space and cuts s to at most n runes, marking a cut
// with an ellipsis.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// splitWords cuts text at spaces into at most n chunks of about the same
// number of words. The chunks join back to text.
func splitWords(text string, n int) []string {
	words := strings.SplitAfter(text, " ")
	per := (len(words) + n - 1) / n
	chunks := make([]string, 0, n)
	for i := 0; i < len(words); i += per {
		chunks = append(chunks, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return chunks
}
