package dawntest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// summary renders a response as "text|name args id|..." for comparison.
func summary(resp *llms.ContentResponse) string {
	c := resp.Choices[0]
	parts := []string{c.Content}
	for _, tc := range c.ToolCalls {
		parts = append(parts, tc.FunctionCall.Name+" "+tc.FunctionCall.Arguments+" "+tc.ID)
	}
	return strings.Join(parts, "|")
}

func userSays(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

func TestScriptTurns(t *testing.T) {
	boom := errors.New("boom")
	m := Script().
		CallTool("writeTodos", map[string]any{"todos": []map[string]string{{"content": "A", "status": "pending"}}}).
		CallTools(ToolCall{Name: "a", Args: `{"x":1}`}, ToolCall{Name: "b"}).
		ReplyAndCall("Looking.", ToolCall{Name: "c", Args: []byte(`[1]`)}).
		Then(func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: fmt.Sprintf("%d messages, %d tools", len(msgs), len(opts.Tools))}}}, nil
		}).
		Reply("All done.").
		Fail(boom)

	tests := []struct {
		want    string
		wantErr string
	}{
		{want: `|writeTodos {"todos":[{"content":"A","status":"pending"}]} call_1_0`},
		{want: `|a {"x":1} call_2_0|b {} call_2_1`},
		{want: `Looking.|c [1] call_3_0`},
		{want: `1 messages, 1 tools`},
		{want: `All done.`},
		{wantErr: "boom"},
		{wantErr: "dawntest: script exhausted after 6 turns"},
		{wantErr: "dawntest: script exhausted after 6 turns"},
	}
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "writeTodos"}}}
	for i, tt := range tests {
		resp, err := m.GenerateContent(context.Background(), userSays("hi"), llms.WithTools(tools))
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("call %d: error %v, want %q", i+1, err, tt.wantErr)
			}
			if tt.wantErr == "boom" && !errors.Is(err, boom) {
				t.Errorf("call %d: error %v is not boom", i+1, err)
			}
		case err != nil:
			t.Errorf("call %d: %v", i+1, err)
		case summary(resp) != tt.want:
			t.Errorf("call %d = %q, want %q", i+1, summary(resp), tt.want)
		}
	}
	if m.Calls() != len(tests) || len(m.Requests()) != len(tests) || len(m.Tools()) != len(tests) {
		t.Errorf("Calls %d, Requests %d, Tools %d; want %d each", m.Calls(), len(m.Requests()), len(m.Tools()), len(tests))
	}
}

func TestScriptRecordsCopies(t *testing.T) {
	m := Script().Reply("one").Reply("two")
	msgs := userSays("first")
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "t1"}}}
	if _, err := m.GenerateContent(context.Background(), msgs, llms.WithTools(tools)); err != nil {
		t.Fatal(err)
	}
	msgs[0].Parts[0] = llms.TextPart("changed")
	tools[0] = llms.Tool{Type: "changed"}
	if _, err := m.GenerateContent(context.Background(), append(msgs, userSays("second")...)); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if got := reqs[0][0].Parts[0].(llms.TextContent).Text; got != "first" {
		t.Errorf("first request text = %q, want the text as it was at the call", got)
	}
	if len(reqs[1]) != 2 {
		t.Errorf("second request has %d messages, want 2", len(reqs[1]))
	}
	reqs[0][0].Parts[0] = llms.TextPart("mutated")
	if got := m.Requests()[0][0].Parts[0].(llms.TextContent).Text; got != "first" {
		t.Errorf("Requests returned shared storage: %q", got)
	}
	if got := m.Tools(); got[0][0].Function.Name != "t1" || len(got[1]) != 0 {
		t.Errorf("Tools = %+v", got)
	}
}

func TestScriptStreamsReply(t *testing.T) {
	tests := []struct {
		text   string
		chunks int
	}{
		{"All done.", 2},
		{"One", 1},
		{"a  b ", 3},
		{"", 0},
	}
	for _, tt := range tests {
		var chunks []string
		m := Script().Reply(tt.text)
		resp, err := m.GenerateContent(context.Background(), userSays("hi"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			chunks = append(chunks, string(c))
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks) != tt.chunks || strings.Join(chunks, "") != resp.Choices[0].Content || resp.Choices[0].Content != tt.text {
			t.Errorf("Reply(%q) streamed %q, content %q", tt.text, chunks, resp.Choices[0].Content)
		}
	}
}

func TestScriptRepeat(t *testing.T) {
	tests := []struct {
		name   string
		script *ScriptedModel
		want   []string
	}{
		{"repeats the last turn", Script().Reply("a").CallTool("loop", nil).Repeat(),
			[]string{"a", "|loop {} call_2_0", "|loop {} call_3_0", "|loop {} call_4_0"}},
		{"empty script with repeat is exhausted", Script().Repeat(), []string{"error", "error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for range tt.want {
				resp, err := tt.script.GenerateContent(context.Background(), userSays("hi"))
				if err != nil {
					got = append(got, "error")
					continue
				}
				got = append(got, summary(resp))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("answers %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScriptBadArgs(t *testing.T) {
	m := Script().CallTool("x", "{not json").CallTool("y", func() {})
	for i := 1; i <= 2; i++ {
		_, err := m.GenerateContent(context.Background(), userSays("hi"))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("dawntest: turn %d: arguments of tool call 0", i)) {
			t.Errorf("call %d: error %v", i, err)
		}
	}
}

func TestScriptWait(t *testing.T) {
	release := make(chan struct{})
	m := Script().Reply("first").Wait(release).Reply("second")
	if _, err := m.GenerateContent(context.Background(), userSays("hi")); err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		resp, err := m.GenerateContent(context.Background(), userSays("hi"))
		if err != nil {
			done <- err.Error()
			return
		}
		done <- resp.Choices[0].Content
	}()
	select {
	case got := <-done:
		t.Fatalf("second turn answered %q before the channel closed", got)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if got := <-done; got != "second" {
		t.Errorf("second turn = %q", got)
	}
}

func TestScriptWaitCanceled(t *testing.T) {
	tests := []struct {
		name   string
		script func(ch <-chan struct{}) *ScriptedModel
	}{
		{"before a turn", func(ch <-chan struct{}) *ScriptedModel { return Script().Wait(ch).Reply("never") }},
		{"after the last turn", func(ch <-chan struct{}) *ScriptedModel { return Script().Wait(ch) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.script(make(chan struct{}))
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error)
			go func() {
				_, err := m.GenerateContent(ctx, userSays("hi"))
				errc <- err
			}()
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want context.Canceled", err)
			}
		})
	}
}

func TestScriptConcurrent(t *testing.T) {
	const n = 32
	m := Script()
	for i := range n {
		m.Reply(fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := m.GenerateContent(context.Background(), userSays("hi"))
			if err != nil {
				t.Error(err)
				return
			}
			seen <- resp.Choices[0].Content
		})
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for s := range seen {
		got[s] = true
	}
	if len(got) != n || m.Calls() != n {
		t.Errorf("%d distinct answers and %d calls, want %d each", len(got), m.Calls(), n)
	}
}

func TestScriptCall(t *testing.T) {
	m := Script().Reply("pong")
	got, err := llms.GenerateFromSinglePrompt(context.Background(), m, "ping")
	if err != nil || got != "pong" {
		t.Fatalf("got %q, %v", got, err)
	}
	if text := m.Requests()[0][0].Parts[0].(llms.TextContent).Text; text != "ping" {
		t.Errorf("recorded prompt %q", text)
	}
}
