package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
)

// TestLazyMockDecisions checks the lazy model's turns as the in-process
// lazyModel plays them: four of six on the first turn (with evidence and a
// reason only when the harness's stepFailed tool is offered), the false
// claim after one tool result, all six after the harness's correction,
// and the last word after that.
func TestLazyMockDecisions(t *testing.T) {
	const (
		open    = `"tools":[{"type":"function","function":{"name":"writeTodos"}}]`
		gated   = `"tools":[{"type":"function","function":{"name":"writeTodos"}},{"type":"function","function":{"name":"stepFailed"}}]`
		user    = `{"role":"user","content":"do all six"}`
		call    = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"writeTodos","arguments":"{}"}}]}`
		result  = `{"role":"tool","tool_call_id":"call_0","content":"ok"}`
		claim   = `{"role":"assistant","content":"All six items are done."}`
		correct = `{"role":"user","content":[{"type":"text","text":"Plan harness: Step 5 and Step 6 are not completed."}]}`
	)
	for _, tc := range []struct {
		name, body string
		done       int
		evidence   bool
		text       string
	}{
		{"first turn, open", `{"messages":[` + user + `],` + open + `}`, 4, false, ""},
		{"first turn, gated", `{"messages":[` + user + `],` + gated + `}`, 4, true, ""},
		{"after one tool result", `{"messages":[` + user + `,` + call + `,` + result + `],` + gated + `}`, 0, true, "All six items are done."},
		{"after the correction", `{"messages":[` + user + `,` + call + `,` + result + `,` + claim + `,` + correct + `],` + gated + `}`, 6, true, ""},
		{"a user message that is not the harness's", `{"messages":[` + user + `,` + call + `,` + result + `,` + claim + `,{"role":"user","content":"thanks"}],` + gated + `}`, 0, true, "All six items are done."},
		{"after two tool results", `{"messages":[` + user + `,` + call + `,` + result + `,` + call + `,` + result + `],` + gated + `}`, 0, true, "All six items are done, for real now."},
	} {
		var req lazyRequest
		if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := decideLazy(&req)
		if d.Done != tc.done || d.Evidence != tc.evidence || d.Text != tc.text {
			t.Errorf("%s: got %+v, want done %d evidence %v text %q", tc.name, d, tc.done, tc.evidence, tc.text)
			continue
		}
		if d.Text != "" {
			continue
		}
		var arg struct {
			Todos []struct {
				Content, Status, Evidence string
			}
			Reason *string
		}
		if err := json.Unmarshal([]byte(d.args()), &arg); err != nil {
			t.Fatalf("%s: args %s: %v", tc.name, d.args(), err)
		}
		completed := 0
		for _, td := range arg.Todos {
			if td.Status == "completed" {
				completed++
				if (td.Evidence != "") != tc.evidence {
					t.Errorf("%s: %s has evidence %q", tc.name, td.Content, td.Evidence)
				}
			}
		}
		if len(arg.Todos) != lazyItems || completed != tc.done || (arg.Reason != nil) != tc.evidence {
			t.Errorf("%s: args %s: %d items, %d completed, reason %v", tc.name, d.args(), len(arg.Todos), completed, arg.Reason != nil)
		}
	}
}

// TestLazyMockSpeaksOpenAI drives the mock through Dawn's own OpenAI
// client, streamed and not: the first answer is the writeTodos call with
// four items completed, with usage; the mock books the call.
func TestLazyMockSpeaksOpenAI(t *testing.T) {
	m, err := startLazyMock()
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": m.url}
	model, err := models.New("openai:gpt-4o-mini", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, streamed := range []bool{false, true} {
		var opts []llms.CallOption
		if streamed {
			opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		}
		user := llms.TextParts(llms.ChatMessageTypeHuman, lazyUser)
		resp, err := model.GenerateContent(context.Background(), []llms.MessageContent{user}, opts...)
		if err != nil {
			t.Fatalf("streamed=%v: %v", streamed, err)
		}
		c := resp.Choices[0]
		if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "writeTodos" || strings.Count(c.ToolCalls[0].FunctionCall.Arguments, `"completed"`) != 4 {
			t.Fatalf("streamed=%v: answer %+v, want writeTodos with 4 completed", streamed, c)
		}
		if in, out, _ := models.Usage(resp); in <= 0 || out <= 0 {
			t.Errorf("streamed=%v: usage %d/%d, want both reported", streamed, in, out)
		}
		if u := m.take(); u.Calls != 1 || u.WireBytes == 0 || u.Prompt == 0 {
			t.Errorf("streamed=%v: booked %+v, want one call with bytes and tokens", streamed, u)
		}
	}
}

// TestLazyRepeatDefault: --lazy runs three rounds unless --repeat says
// otherwise; the other modes keep one.
func TestLazyRepeatDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{[]string{"--lazy"}, 3}, {[]string{"--lazy", "--repeat", "1"}, 1}, {nil, 1}} {
		o, err := parseFlags(tc.args)
		if err != nil || o.repeat != tc.want {
			t.Errorf("%v: repeat %d, err %v; want %d", tc.args, o.repeat, err, tc.want)
		}
	}
}
