package models

import (
	"context"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/todo"
	"github.com/tmc/langchaingo/llms"
)

// Tool names the offline model knows how to call.
const (
	offlineTaskTool   = "task"
	offlineTodosTool  = "writeTodos"
	offlineVerifyTool = "verifyPostcondition"
)

// maxTodoFailures is how many failed writeTodos calls make the offline model
// stop planning and answer: the tool rejects what it writes, and trying
// forever would only run into the turn limit.
const maxTodoFailures = 3

// offlineModel is the built-in deterministic model. It has no state: every
// answer follows from the messages and the tools of the call.
type offlineModel struct{}

// NewOffline returns the built-in model that needs no network. Per call it
// (1) hands the user's text to the first subagent once, when a "task" tool is
// offered; else (2) advances the plan by one step with "writeTodos", when that
// tool is offered and the plan is not finished; else (3) calls the next app
// tool the call offers, in name order, that it has not called since the user
// last spoke (app tools are those the context names, see WithAppTools), with
// arguments built from its schema (see argsFromSchema); else (4) answers with
// a short text quoting each app tool's result, streamed in a few chunks. The
// same messages always give the same answer.
func NewOffline() llms.Model { return offlineModel{} }

// GenerateContent answers one model turn: a capability's scripted reply,
// else the task call, else the next step of the plan, else the next app
// tool call, else the answer. The
// scripts come from ctx (see WithMarkers).
func (offlineModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts llms.CallOptions
	for _, opt := range options {
		opt(&opts)
	}
	t := readTranscript(messages, scriptsFrom(ctx))
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
	plan, failures := []item(nil), 0
	if findTool(opts.Tools, offlineTodosTool) != nil {
		var call *llms.ContentResponse
		if plan, failures, call = t.planStep(nextID, findTool(opts.Tools, offlineVerifyTool) != nil); call != nil {
			return call, nil
		}
	}
	appTools := appToolsFrom(ctx)
	if call := t.nextAppTool(nextID, opts.Tools, appTools); call != nil {
		return call, nil
	}
	text := offlineAnswer(t, plan, failures >= maxTodoFailures, t.appToolResults(appTools))
	if err := streamWords(ctx, opts.StreamingFunc, text); err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "stop"}}}, nil
}

// planStep returns the plan and the failed writeTodos calls so far, and
// the next call that works on the plan: writeTodos advancing it one step,
// or (when the route verifies postconditions, enforced) the next check;
// call is nil when the plan is done.
func (t transcript) planStep(nextID string, enforced bool) (plan []item, failures int, call *llms.ContentResponse) {
	plan, failures = t.currentPlan()
	if len(plan) == 0 {
		plan = []item{{Content: "Understand the request", Status: todo.Pending}, {Content: "Answer the request", Status: todo.Pending}}
	}
	if next, ok := advancePlan(plan); ok && failures < maxTodoFailures {
		list := todoList{Todos: next}
		if enforced {
			list.Reason = "offline model: advanced one step"
		} else {
			for i := range list.Todos {
				list.Todos[i].Evidence = "" // Dawn's writeTodos takes only content and status
			}
		}
		return plan, failures, toolCallResponse(nextID, offlineTodosTool, marshalArgs(list))
	}
	if n, text, ok := t.openPostcondition(); ok && enforced {
		args := marshalArgs(map[string]any{"index": n, "evidence": "offline model: checked " + strconv.Quote(shorten(text, 60))})
		return plan, failures, toolCallResponse(nextID, offlineVerifyTool, args)
	}
	return plan, failures, nil
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

// offlineAnswer is the final text: what was done, and how to get a real model.
func offlineAnswer(t transcript, plan []item, gaveUp bool, results []toolResult) string {
	var b strings.Builder
	b.WriteString("Offline model: ")
	input := strconv.Quote(shorten(t.lastUser, 80))
	switch {
	case gaveUp:
		b.WriteString("stopped planning for " + input + " because writeTodos failed " + strconv.Itoa(maxTodoFailures) + " times.")
	case len(plan) > 0:
		b.WriteString("worked through " + strconv.Itoa(len(plan)) + " plan item")
		if len(plan) != 1 {
			b.WriteString("s")
		}
		b.WriteString(" for " + input + ".")
	default:
		b.WriteString("received " + input + ".")
	}
	if t.taskCalled && t.taskAnswer != "" {
		b.WriteString(" The " + strconv.Quote(t.taskSubagent) + " subagent answered: " + strconv.Quote(shorten(t.taskAnswer, 80)) + ".")
	}
	b.WriteString(quoteResults(results))
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
