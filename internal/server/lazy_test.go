package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/tmc/langchaingo/llms"
)

// lazyModel is seed 002's lazy model: given a checklist of six items it
// finishes four and claims the work is done. It only finishes the rest when
// the harness's correction tells it what is missing.
func lazyModel() *dawntest.ScriptedModel {
	respond := func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		enforced := false
		for _, tl := range opts.Tools {
			enforced = enforced || tl.Function.Name == "stepFailed"
		}
		last := msgs[len(msgs)-2] // the plan state block follows the conversation
		corrected := last.Role == llms.ChatMessageTypeHuman && strings.Contains(fmt.Sprint(last.Parts), "Plan harness")
		toolResults := 0
		for _, m := range msgs {
			if m.Role == llms.ChatMessageTypeTool {
				toolResults++
			}
		}
		done := 0
		switch {
		case corrected:
			done = 6
		case toolResults == 0:
			done = 4
		case toolResults == 1 && !corrected:
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "All six items are done."}}}, nil
		default:
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "All six items are done, for real now."}}}, nil
		}
		arg := list(6, done, enforced)
		if !enforced {
			delete(arg, "reason") // Dawn's writeTodos takes only todos
		}
		args, _ := json.Marshal(arg)
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{{
			ID: fmt.Sprintf("call_%d", toolResults), Type: "function",
			FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: string(args)},
		}}}}}, nil
	}
	return dawntest.Script().Then(respond).Repeat()
}

// promptSize is what the model read over a run, summed over every call:
// the text of each message (tool calls' arguments and tool results
// included) and each tool definition as JSON, in bytes and in o200k tokens.
func promptSize(m *dawntest.ScriptedModel) (bytes, toks int) {
	add := func(s string) {
		bytes += len(s)
		toks += tokens.Count(s)
	}
	for _, req := range m.Requests() {
		for _, msg := range req {
			for _, part := range msg.Parts {
				switch p := part.(type) {
				case llms.TextContent:
					add(p.Text)
				case llms.ToolCall:
					add(p.FunctionCall.Name + p.FunctionCall.Arguments)
				case llms.ToolCallResponse:
					add(p.Content)
				}
			}
		}
	}
	for _, defs := range m.Tools() {
		for _, d := range defs {
			raw, _ := json.Marshal(d.Function)
			add(string(raw))
		}
	}
	return bytes, toks
}

func TestLazyModelWithAndWithoutTheGate(t *testing.T) {
	dir := enforcedApp(t, "evidence: required\n", 6)

	lazy := lazyModel()
	open := apptest.New(t, dir, lazy, apptest.Options{}).Run(t, "lazy-open", "/open", "do all six")
	var todos []struct{ Status string }
	_ = json.Unmarshal(open.Values["todos"], &todos)
	completed := 0
	for _, td := range todos {
		if td.Status == "completed" {
			completed++
		}
	}
	if open.Err != nil || completed != 4 {
		t.Fatalf("without enforcement: err %v, %d of 6 completed", open.Err, completed)
	}
	openCalls := lazy.Calls()
	openBytes, openTokens := promptSize(lazy)

	lazy = lazyModel()
	enforced := apptest.New(t, dir, lazy, apptest.Options{}).Run(t, "lazy-enforced", "/job", "do all six")
	p := planOf(t, enforced)
	if enforced.Err != nil || p.State != harness.Done {
		t.Fatalf("with enforcement: err %v, plan %+v", enforced.Err, p)
	}
	for _, it := range p.Items {
		if it.Status != harness.Completed {
			t.Fatalf("item %q is %s", it.Content, it.Status)
		}
	}
	gateBytes, gateTokens := promptSize(lazy)
	t.Logf("gate cost per completed 6-item plan: %d model calls without enforcement, %d with (+%d); prompt bytes %d vs %d (+%d); o200k tokens %d vs %d (+%d)",
		openCalls, lazy.Calls(), lazy.Calls()-openCalls, openBytes, gateBytes, gateBytes-openBytes, openTokens, gateTokens, gateTokens-openTokens)
	// Before issue #18 the gate cost 3,244 tokens more than the open run;
	// the prompt and tool definitions were made compact to halve that.
	if extra := gateTokens - openTokens; extra > 3244/2 {
		t.Errorf("the gate costs %d tokens more than the open run; the budget is %d", extra, 3244/2)
	}
}
