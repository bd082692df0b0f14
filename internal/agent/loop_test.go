package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// prepare discovers a one-route app with the given files and prepares the
// route with the real markers and the given app tools.
func prepare(t *testing.T, files map[string]string, tools ...capabilities.AppTool) *capabilities.Prepared {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := router.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := capabilities.Prepare(context.Background(), tree.Route("/r"), capabilities.Input{Markers: markers.All(), AppTools: tools, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type recorder struct{ events []stream.Event }

func (r *recorder) emit(e stream.Event) { r.events = append(r.events, e) }

func (r *recorder) toolErrors() []string {
	var out []string
	for _, e := range r.events {
		if e.Type != stream.TypeToolResult {
			continue
		}
		var d struct{ Error string }
		_ = json.Unmarshal(e.Data, &d)
		if d.Error != "" {
			out = append(out, d.Error)
		}
	}
	return out
}

func run(t *testing.T, p *capabilities.Prepared, model llms.Model, mutate func(*agent.Config, *testHost)) (agent.Result, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	host := &testHost{rec: rec}
	cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: host}
	if mutate != nil {
		mutate(&cfg, host)
	}
	res, err := agent.Run(context.Background(), cfg, nil, nil, []thread.Message{{Role: thread.RoleUser, Content: "go"}})
	return res, rec, err
}

type echoIn struct {
	Text string `json:"text"`
}

func TestToolFailuresGoBackToTheModel(t *testing.T) {
	panicky := capabilities.Func("boom", "panics", func(context.Context, echoIn) (string, error) { panic("kaboom") })
	failing := capabilities.Func("fail", "fails", func(context.Context, echoIn) (string, error) { return "", errors.New("disk full") })
	big := capabilities.Func("big", "big output", func(context.Context, echoIn) (string, error) { return strings.Repeat("é", 100), nil })
	tools := []capabilities.AppTool{{Tool: panicky}, {Tool: failing}, {Tool: big}}
	cases := []struct {
		name    string
		call    dawntest.ToolCall
		wantErr string // in the tool_result error and the tool message
		wantMsg string // in the tool message the model sees next
	}{
		{"panic", dawntest.ToolCall{Name: "boom", Args: map[string]any{"text": "x"}}, `tool "boom" panicked: kaboom`, ""},
		{"error", dawntest.ToolCall{Name: "fail", Args: map[string]any{"text": "x"}}, "disk full", ""},
		{"schema", dawntest.ToolCall{Name: "fail", Args: map[string]any{"text": 3}}, `invalid input for tool "fail"`, ""},
		{"unknown", dawntest.ToolCall{Name: "nope", Args: map[string]any{}}, `there is no tool "nope" on this route; available tools: boom, fail, big`, ""},
		{"truncated", dawntest.ToolCall{Name: "big", Args: map[string]any{"text": "x"}}, "", "[output truncated: 50 of 200 bytes shown]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, map[string]string{"r/agent.md": "Prompt."}, tools...)
			model := dawntest.Script().CallTools(tc.call).Reply("ok")
			res, rec, err := run(t, p, model, func(c *agent.Config, h *testHost) { c.MaxToolOutput = 50 })
			if err != nil {
				t.Fatalf("run ended with %v; a tool failure must not end it", err)
			}
			if res.Answer != "ok" || model.Calls() != 2 {
				t.Fatalf("answer %q after %d calls", res.Answer, model.Calls())
			}
			toolMsg := res.Messages[2]
			if tc.wantErr != "" {
				errs := rec.toolErrors()
				if len(errs) != 1 || !strings.Contains(errs[0], tc.wantErr) || !toolMsg.IsError || !strings.Contains(toolMsg.Content, tc.wantErr) {
					t.Fatalf("tool errors %q, message %+v; want %q", errs, toolMsg, tc.wantErr)
				}
			}
			if tc.wantMsg != "" && !strings.Contains(toolMsg.Content, tc.wantMsg) {
				t.Fatalf("tool message %q lacks %q", toolMsg.Content, tc.wantMsg)
			}
		})
	}
}

// TestPlanIsReRenderedEveryTurn: the live plan is rendered fresh for every
// model call into the state block after the conversation, while the system
// prompt stays the same, so each request begins with the previous one.
func TestPlanIsReRenderedEveryTurn(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "You are terse.", "r/plan.md": "- [ ] First\n- [x] Second\n"})
	model := dawntest.Script().
		CallTool("writeTodos", map[string]any{"todos": []map[string]string{{"content": "First", "status": "in_progress"}, {"content": "Second", "status": "completed"}}}).
		Reply("done")
	if _, _, err := run(t, p, model, nil); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	text := func(mc llms.MessageContent) string { return mc.Parts[0].(llms.TextContent).Text }
	first, second := reqs[0], reqs[1]
	if system := text(first[0]); !strings.HasPrefix(system, "You are terse.") || !strings.Contains(system, "writeTodos") || strings.Contains(system, "First") {
		t.Fatalf("first system prompt has the plan or lacks the planning rules:\n%s", system)
	}
	if text(second[0]) != text(first[0]) {
		t.Fatalf("the system prompt changed with the plan:\n%s\nthen\n%s", text(first[0]), text(second[0]))
	}
	block := func(req []llms.MessageContent) string {
		last := req[len(req)-1]
		if last.Role != llms.ChatMessageTypeSystem {
			t.Fatalf("the last message is %s, not the state block", last.Role)
		}
		return text(last)
	}
	if b := block(first); !strings.Contains(b, "- [pending] First") || !strings.Contains(b, "- [completed] Second") {
		t.Fatalf("first state block:\n%s", b)
	}
	if b := block(second); !strings.Contains(b, "- [in_progress] First") {
		t.Fatalf("second state block does not show the updated plan:\n%s", b)
	}
	// The second request is the first without its state block, then the
	// turn's messages, then a fresh block.
	for i, mc := range first[:len(first)-1] {
		if mc.Role != second[i].Role || text(mc) != text(second[i]) {
			t.Fatalf("message %d differs between the requests", i)
		}
	}
}

func TestCheckpointAfterEveryStep(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P", "r/plan.md": "- [ ] A\n"})
	model := dawntest.Script().
		CallTool("writeTodos", map[string]any{"todos": []map[string]string{{"content": "A", "status": "completed"}}}).
		Reply("done")
	var steps [][]thread.Message
	_, _, err := run(t, p, model, func(c *agent.Config, h *testHost) {
		h.save = func(_ context.Context, added []thread.Message, values thread.State) error {
			steps = append(steps, added)
			return nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Step 1: user + assistant(call) + tool; step 2: assistant answer.
	if len(steps) != 2 || len(steps[0]) != 3 || len(steps[1]) != 1 {
		t.Fatalf("steps = %v", steps)
	}

	failing := dawntest.Script().CallTool("writeTodos", map[string]any{"todos": []any{}}).Reply("never")
	_, _, err = run(t, p, failing, func(c *agent.Config, h *testHost) {
		h.save = func(context.Context, []thread.Message, thread.State) error { return errors.New("disk full") }
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") || failing.Calls() != 1 {
		t.Fatalf("a failed checkpoint must end the run: err=%v calls=%d", err, failing.Calls())
	}
}

func TestSubagentDepthLimit(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P", "r/subagents/helper/agent.md": "H"})
	model := dawntest.Script().CallTool("task", map[string]any{"subagent": "helper", "input": "x"}).Reply("parent done")
	_, rec, err := run(t, p, model, func(c *agent.Config, h *testHost) {
		c.MaxDepth = 1
		c.Depth = 1
		h.subagent = func(*capabilities.Prepared, string) (*capabilities.Prepared, llms.Model, string, error) {
			t.Fatal("subagent started past the depth limit")
			return nil, nil, "", nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := rec.toolErrors(); len(errs) != 1 || !strings.Contains(errs[0], "depth limit of 1") {
		t.Fatalf("tool errors = %q", errs)
	}
}

func TestModelErrorNamesTheModel(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P"})
	_, _, err := run(t, p, dawntest.Script().Fail(errors.New("refused")), func(c *agent.Config, h *testHost) { c.ModelName = "openai:gpt-4o-mini" })
	var me *agent.ModelError
	if !errors.As(err, &me) || err.Error() != "model openai:gpt-4o-mini: refused" {
		t.Fatalf("err = %v", err)
	}
}

// TestArgumentsThatAreNotJSON: a call whose arguments are not JSON fails
// with an input error that quotes them, without running the tool. The call
// keeps its arguments as a JSON string, which is also what the tool_call
// event carries, so the messages encode as JSON (and can be saved), and the
// model is shown the call again with {} as its arguments.
func TestArgumentsThatAreNotJSON(t *testing.T) {
	ran := false
	echo := capabilities.Func("echo", "echoes", func(_ context.Context, in echoIn) (string, error) { ran = true; return in.Text, nil })
	for _, args := range []string{`{not json`, ``, `  `, `{"text":"cut`} {
		t.Run(args, func(t *testing.T) {
			p := prepare(t, map[string]string{"r/agent.md": "P"}, capabilities.AppTool{Tool: echo})
			model := dawntest.Script().Then(func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
				call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "echo", Arguments: args}}
				return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
			}).Reply("ok")
			res, rec, err := run(t, p, model, nil)
			if err != nil || res.Answer != "ok" || ran {
				t.Fatalf("err %v, answer %q, tool ran %v", err, res.Answer, ran)
			}
			want, _ := json.Marshal(args)
			if got := res.Messages[1].ToolCalls[0].Input; string(got) != string(want) {
				t.Fatalf("kept input %s, want %s", got, want)
			}
			if _, err := json.Marshal(res.Messages); err != nil {
				t.Fatalf("messages do not encode: %v", err)
			}
			var call struct{ Input json.RawMessage }
			_ = json.Unmarshal(rec.events[1].Data, &call)
			if rec.events[0].Type != stream.TypeModelCall || rec.events[1].Type != stream.TypeToolCall || string(call.Input) != string(want) {
				t.Fatalf("first events %s, %s %s, want model_call, tool_call with input %s", rec.events[0].Type, rec.events[1].Type, rec.events[1].Data, want)
			}
			errs := rec.toolErrors()
			if len(errs) != 1 || !strings.Contains(errs[0], `invalid input for tool "echo": arguments are not valid JSON`) || !strings.Contains(errs[0], strings.TrimSpace(args)) {
				t.Fatalf("tool errors = %q", errs)
			}
			replay := model.Requests()[1][2].Parts[0].(llms.ToolCall)
			if replay.FunctionCall.Arguments != "{}" {
				t.Fatalf("replayed arguments %q, want {}", replay.FunctionCall.Arguments)
			}
		})
	}
}

// tempModel answers at once and records the temperature of each call, -1
// when the call set none.
type tempModel struct{ got []float64 }

func (m *tempModel) GenerateContent(_ context.Context, _ []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	o := llms.CallOptions{Temperature: -1}
	for _, opt := range options {
		opt(&o)
	}
	m.got = append(m.got, o.Temperature)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

func (m *tempModel) Call(context.Context, string, ...llms.CallOption) (string, error) { return "", nil }

// TestTemperatureOnlyFromAgentMD: a model call carries a temperature only
// when agent.md sets one; 0 is a setting like any other.
func TestTemperatureOnlyFromAgentMD(t *testing.T) {
	for _, tc := range []struct {
		agentMD string
		want    float64
	}{
		{"Prompt.", -1},
		{"---\ntemperature: 0\n---\nPrompt.", 0},
		{"---\ntemperature: 0.7\n---\nPrompt.", 0.7},
	} {
		model := &tempModel{}
		if _, _, err := run(t, prepare(t, map[string]string{"r/agent.md": tc.agentMD}), model, nil); err != nil {
			t.Fatal(err)
		}
		if len(model.got) != 1 || model.got[0] != tc.want {
			t.Errorf("%q: temperatures sent %v, want [%v]", tc.agentMD, model.got, tc.want)
		}
	}
}

// TestAppTemperatureIsTheDefault: dawn.yaml's temperature applies to a
// route whose agent.md sets none, and agent.md's wins over it.
func TestAppTemperatureIsTheDefault(t *testing.T) {
	app := 0.3
	for _, tc := range []struct {
		agentMD string
		want    float64
	}{
		{"Prompt.", 0.3},
		{"---\ntemperature: 0\n---\nPrompt.", 0},
		{"---\ntemperature: 1.1\n---\nPrompt.", 1.1},
	} {
		model := &tempModel{}
		if _, _, err := run(t, prepare(t, map[string]string{"r/agent.md": tc.agentMD}), model, func(c *agent.Config, h *testHost) { c.AppTemperature = &app }); err != nil {
			t.Fatal(err)
		}
		if len(model.got) != 1 || model.got[0] != tc.want {
			t.Errorf("%q with dawn.yaml temperature 0.3: temperatures sent %v, want [%v]", tc.agentMD, model.got, tc.want)
		}
	}
}

// TestModelCallEvents: each model call that answered is a model_call event
// right after it, with the token usage and finish reason the provider
// reported, and without token counts when it reported none.
func TestModelCallEvents(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "Prompt."})
	model := dawntest.Script().Then(func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content: "hi", StopReason: "stop",
			GenerationInfo: map[string]any{"PromptTokens": 21, "CompletionTokens": 9},
		}}}, nil
	})
	_, rec, err := run(t, p, model, nil)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range rec.events {
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "model_call" {
		t.Fatalf("events %v, want [model_call]", types)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.events[0].Data, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["duration_ms"].(float64); !ok {
		t.Fatalf("model_call %s has no numeric duration_ms", rec.events[0].Data)
	}
	delete(got, "duration_ms")
	want := map[string]any{"model": "script", "input_tokens": 21.0, "output_tokens": 9.0, "finish_reason": "stop"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("model_call %s, want %v", rec.events[0].Data, want)
	}

	_, rec, err = run(t, p, dawntest.Script().Reply("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"input_tokens", "output_tokens"} {
		if strings.Contains(string(rec.events[0].Data), key) {
			t.Fatalf("model_call %s reports %s the model did not", rec.events[0].Data, key)
		}
	}
}
