package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
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
		last := msgs[len(msgs)-1]
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

// promptBytes approximates the input the model read over a run: the bytes
// of every message of every call. Divided by four it is a rough token count.
func promptBytes(m *dawntest.ScriptedModel) int {
	n := 0
	for _, req := range m.Requests() {
		for _, msg := range req {
			n += len(fmt.Sprint(msg.Parts))
		}
	}
	return n
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
	openCalls, openBytes := lazy.Calls(), promptBytes(lazy)

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
	t.Logf("gate cost: %d model calls without enforcement, %d with (+%d); prompt bytes %d vs %d (+%d, about %d tokens at 4 bytes a token)",
		openCalls, lazy.Calls(), lazy.Calls()-openCalls, openBytes, promptBytes(lazy), promptBytes(lazy)-openBytes, (promptBytes(lazy)-openBytes)/4)
}
