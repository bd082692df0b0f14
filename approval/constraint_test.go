package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
	"github.com/tmc/langchaingo/llms"
)

// envPolicy runs staging deploys, escalates production ones, fails on
// "broken", panics on "panic" and refuses the rest.
func envPolicy(_ context.Context, args json.RawMessage) (approval.Decision, error) {
	var in deployIn
	_ = json.Unmarshal(args, &in)
	switch in.Env {
	case "staging":
		return approval.Decision{Outcome: approval.Run}, nil
	case "prod":
		return approval.Decision{Outcome: approval.Ask, Reason: "production waits"}, nil
	case "broken":
		return approval.Decision{}, errors.New("the inventory is down")
	case "panic":
		panic("boom")
	}
	return approval.Decision{Outcome: approval.Refuse, Reason: "no such environment"}, nil
}

// TestConstraint: a constraint runs, refuses (with its reason, or failing
// closed on an error or a panic) or escalates a call; an escalation parks
// as a tool approval does, "always" lets the person's later escalations
// of the tool run, and non-interactive refuses it.
func TestConstraint(t *testing.T) {
	ms := approval.Constrain(markers.All(), map[string][]approval.Constraint{"deployProd": {envPolicy}})
	serveWith := func(t *testing.T, dawnYAML, env string) (string, *deploys) {
		d := &deploys{}
		files := map[string]string{"ops/agent.md": "You deploy."}
		if dawnYAML != "" {
			files["dawn.yaml"] = dawnYAML
		}
		script := dawntest.Script().Then(func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
			if msgs[len(msgs)-1].Role == llms.ChatMessageTypeHuman {
				args, _ := json.Marshal(deployIn{Env: env, Version: "1.4.2"})
				call := llms.ToolCall{ID: fmt.Sprintf("call-%d", len(msgs)), Type: "function", FunctionCall: &llms.FunctionCall{Name: "deployProd", Arguments: string(args)}}
				return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
			}
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done"}}}, nil
		}).Repeat()
		h := apptest.New(t, writeApp(t, files), script, apptest.Options{Tools: []capabilities.AppTool{d.tool()}, Markers: ms})
		return h.Serve(t), d
	}
	for _, c := range []struct {
		env, told string
		runs      int
	}{
		{"staging", "", 1},
		{"qa", "no such environment", 0},
		{"broken", "the inventory is down", 0},
		{"panic", "panic: boom", 0},
	} {
		t.Run(c.env, func(t *testing.T) {
			url, d := serveWith(t, "", c.env)
			events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("ship")))
			if _, ok := parked(t, events); ok || len(d.got()) != c.runs {
				t.Fatalf("parked %v, ran %d, want %d", ok, len(d.got()), c.runs)
			}
			if c.told != "" && !strings.Contains(string(events[len(events)-1].Data), c.told) {
				t.Fatalf("the model was not told %q: %s", c.told, events[len(events)-1].Data)
			}
		})
	}
	t.Run("escalated", func(t *testing.T) {
		url, d := serveWith(t, "", "prod")
		in, ok := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("ship"))))
		if !ok || in.Kind != approval.Kind || len(d.got()) != 0 {
			t.Fatalf("a production deploy did not park: %+v", in)
		}
		state := state(t, url, "t1")
		if !strings.Contains(state.raw, `"reason":"production waits"`) {
			t.Fatalf("the interrupt lacks the constraint's reason: %s", state.raw)
		}
		resume(t, url, "t1", resumeBody(in.ID, "resolved", `"always"`))
		if _, ok := parked(t, readSSE(t, post(t, url+"/threads/t2/runs/stream", runBody("ship again")))); ok || len(d.got()) != 2 {
			t.Fatalf("after always: parked %v, ran %d", ok, len(d.got()))
		}
	})
	t.Run("non-interactive", func(t *testing.T) {
		url, d := serveWith(t, "permissions: {mode: non-interactive}\n", "prod")
		events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("ship")))
		if _, ok := parked(t, events); ok || len(d.got()) != 0 || !strings.Contains(string(events[len(events)-1].Data), "production waits") {
			t.Fatalf("non-interactive escalation: parked %v, ran %d", ok, len(d.got()))
		}
	})
}
