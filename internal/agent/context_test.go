package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// TestBeforeModelHook: a BeforeModel hook's conversation is what the model
// is sent, the thread keeps its own messages, the hook's update is saved
// as a step of its own before the call with its events emitted, the hook
// estimates requests and asks another model by name through the run.
func TestBeforeModelHook(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "Prompt."})
	p.Fields = append(p.Fields, capabilities.Field{Name: "seen", Type: "integer", Reducer: capabilities.Replace})
	summarizer := dawntest.Script().Reply("the gist")
	var log []string
	var sizes []int
	p.Hooks = append(p.Hooks, &capabilities.Hooks{BeforeModel: func(ctx context.Context, turn capabilities.ModelTurn) (capabilities.ModelView, error) {
		sizes = append(sizes, turn.Tokens(turn.Messages), turn.Tokens(append(turn.Messages, thread.Message{Role: thread.RoleUser, Content: strings.Repeat("word ", 400)})))
		gist, err := turn.Complete(ctx, "test:summarizer", "Summarize.", turn.Messages)
		if err != nil {
			return capabilities.ModelView{}, err
		}
		log = append(log, "hook")
		ev := stream.New("seen", map[string]int{"n": len(turn.Messages)})
		return capabilities.ModelView{
			Messages: []thread.Message{{Role: thread.RoleUser, Content: gist}},
			Effect:   capabilities.Effect{Update: thread.State{"seen": json.RawMessage(fmt.Sprint(len(turn.Messages)))}, Events: []stream.Event{ev}},
		}, nil
	}})
	model := dawntest.Script().Reply("done")
	res, rec, err := run(t, p, model, func(c *agent.Config, h *testHost) {
		c.Models = func(spec string) (llms.Model, error) {
			if spec != "test:summarizer" {
				return nil, fmt.Errorf("no model %s", spec)
			}
			return summarizer, nil
		}
		h.save = func(_ context.Context, added []thread.Message, values thread.State) error {
			log = append(log, fmt.Sprintf("save %d messages, seen=%s", len(added), values["seen"]))
			return nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	req := model.Requests()[0]
	if len(req) != 2 || apptestText(req[1]) != "the gist" {
		t.Fatalf("the model was sent %v; want the system prompt and the hook's message", req)
	}
	if got := apptestText(summarizer.Requests()[0][0]); got != "Summarize." {
		t.Fatalf("the other model's system prompt: %q", got)
	}
	if len(res.Messages) != 2 || res.Messages[0].Content != "go" {
		t.Fatalf("the thread's messages changed: %+v", res.Messages)
	}
	if want := "hook,save 1 messages, seen=1,save 1 messages, seen=1"; strings.Join(log, ",") != want {
		t.Fatalf("order: %q, want %q", strings.Join(log, ","), want)
	}
	if types := strings.Join(dawntest.Types(rec.events), ","); !strings.HasPrefix(types, "seen,") {
		t.Fatalf("events %s: the hook's event must come before the model call's", types)
	}
	if sizes[0] <= 0 || sizes[1] < sizes[0]+300 {
		t.Fatalf("token estimates %v: a longer request must count more", sizes)
	}
}

// TestToolOutputHook: a ToolOutput hook's text is what the model sees of
// a call's output and what the thread keeps; the tool_result event keeps
// the full output.
func TestToolOutputHook(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tool := capabilities.Func("dump", "dumps", func(context.Context, echoIn) (string, error) { return long, nil })
	p := prepare(t, map[string]string{"r/agent.md": "Prompt."}, capabilities.AppTool{Tool: tool})
	p.Hooks = append(p.Hooks, &capabilities.Hooks{ToolOutput: func(ctx context.Context, ev capabilities.ToolEvent, text string) (string, bool) {
		inv, ok := capabilities.InvocationFrom(ctx)
		if !ok || inv.CallID != ev.CallID {
			return "", false
		}
		return fmt.Sprintf("preview of %d bytes from %s", len(text), ev.Name), true
	}})
	model := dawntest.Script().CallTool("dump", map[string]string{"text": "x"}).Reply("ok")
	res, rec, err := run(t, p, model, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[2].Content; got != "preview of 5000 bytes from dump" {
		t.Fatalf("the thread's tool message: %q", got)
	}
	var out struct {
		Output string `json:"output"`
	}
	for _, e := range rec.events {
		if e.Type == stream.TypeToolResult {
			_ = json.Unmarshal(e.Data, &out)
		}
	}
	if out.Output != long {
		t.Fatalf("the tool_result event holds %d bytes, want the full %d", len(out.Output), len(long))
	}
}

// apptestText is the text of a request message's first part.
func apptestText(m llms.MessageContent) string { return fmt.Sprint(m.Parts[0]) }
