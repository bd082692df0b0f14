package contextwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// budget is the max_input_tokens of the long threads.
const budget = 8000

// pageTool is an app tool whose output is a few KB of text per page.
func pageTool() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("fetchPage", "Fetch a page of the report.",
		func(_ context.Context, in struct {
			Page int `json:"page"`
		}) (string, error) {
			var b strings.Builder
			for b.Len() < 3000 {
				fmt.Fprintf(&b, "page %d line %d: revenue figures and notes for the quarter. ", in.Page, b.Len()/60)
			}
			return b.String(), nil
		})}
}

// request is one model request a scripted model got.
type request struct {
	msgs    []llms.MessageContent
	tools   []llms.Tool
	summary bool
}

// scriptModel answers summary requests (those with the summary model's
// instruction) with a short summary and every other request by its count
// alone, through script, so that a thread goes the same whatever the
// model is shown.
type scriptModel struct {
	mu       sync.Mutex
	n        int
	script   func(n int) *llms.ContentChoice
	requests []request
}

func (m *scriptModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	summary := len(msgs) > 0 && msgs[0].Role == llms.ChatMessageTypeSystem && strings.HasPrefix(fmt.Sprint(msgs[0].Parts[0]), "You condense")
	m.requests = append(m.requests, request{msgs: msgs, tools: opts.Tools, summary: summary})
	if summary {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: fmt.Sprintf("The user asked for the quarterly report; pages up to %d were read.", m.n)}}}, nil
	}
	c := m.script(m.n)
	m.n++
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{c}}, nil
}

func (m *scriptModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func (m *scriptModel) all() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.requests...)
}

func call(n int, name string, args any) *llms.ContentChoice {
	raw, _ := json.Marshal(args)
	return &llms.ContentChoice{ToolCalls: []llms.ToolCall{{ID: fmt.Sprintf("call_%d", n), Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: string(raw)}}}}
}

// items are the long thread's plan items.
var items = []string{"Read the sales pages", "Read the cost pages", "Read the staff pages", "Read the risk pages", "Read the outlook pages", "Write the report"}

// todos is a writeTodos input with the items before active completed.
func todos(active int) map[string]any {
	var list []map[string]string
	for i, c := range items {
		status := "pending"
		switch {
		case i < active:
			status = "completed"
		case i == active:
			status = "in_progress"
		}
		list = append(list, map[string]string{"content": c, "status": status})
	}
	return map[string]any{"todos": list, "reason": "progress"}
}

// longTurns is how many model turns the long thread's script makes.
const longTurns = 330

// longScript is a thread of longTurns turns: a plan of six items, pages
// read one a turn, the plan moved on every 50 turns, a premature answer
// at turn 150 (the harness's gate refuses it) and the final answer last.
func longScript(n int) *llms.ContentChoice {
	switch {
	case n == 0:
		return call(n, "writeTodos", todos(0))
	case n == 150:
		return &llms.ContentChoice{Content: "All done."}
	case n == longTurns-2:
		return call(n, "writeTodos", todos(len(items)))
	case n == longTurns-1:
		return &llms.ContentChoice{Content: "The report is finished."}
	case n%50 == 0:
		return call(n, "writeTodos", todos(n/50))
	}
	return call(n, "fetchPage", map[string]int{"page": n})
}

// longApp is an app with the route /report: a harness-owned plan and, when
// context is not empty, that context section.
func longApp(t *testing.T, context string) string {
	front := "---\nmax_turns: 400\n"
	if context != "" {
		front += "context: " + context + "\n"
	}
	return apptest.WriteApp(t, map[string]string{
		"report/agent.md": front + "---\nYou write the quarterly report from its pages.",
		"report/plan.md":  "---\nenforce: true\n---\n",
	})
}

// estimate is the request's input tokens as the runtime estimates them
// (the scripted model runs as "offline", counted at four bytes a token).
func estimate(r request) int {
	var system string
	var msgs []thread.Message
	for i, m := range r.msgs {
		if i == 0 && m.Role == llms.ChatMessageTypeSystem {
			system = fmt.Sprint(m.Parts[0])
			continue
		}
		msgs = append(msgs, threadMessage(m))
	}
	return tokens.EstimateMessages("offline", system, msgs, r.tools)
}

// threadMessage is a request's message as the thread holds it.
func threadMessage(m llms.MessageContent) thread.Message {
	var out thread.Message
	for _, p := range m.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			out.Content += p.Text
		case llms.ToolCall:
			out.ToolCalls = append(out.ToolCalls, thread.ToolCall{ID: p.ID, Name: p.FunctionCall.Name, Input: json.RawMessage(p.FunctionCall.Arguments)})
		case llms.ToolCallResponse:
			out.Name, out.Content = p.Name, p.Content
		}
	}
	return out
}

// TestLongThreadStaysUnderBudget: a thread of 330 turns with a few KB of
// tool output each, under max_input_tokens 8000, keeps every model request
// (the summary model's included) under the budget, ends with the same
// todos and harness items as the same thread without compaction, and the
// harness's gate still refuses a premature answer made after compactions.
func TestLongThreadStaysUnderBudget(t *testing.T) {
	run := func(context string) (*dawntest.Result, *scriptModel) {
		model := &scriptModel{script: longScript}
		srv := dawntest.New(t, longApp(t, context), model, dawntest.Options{Tools: []capabilities.AppTool{pageTool()}})
		res := srv.Run(t, "long", "/report", "Write the quarterly report.")
		if res.Err != nil {
			t.Fatalf("context %q: %v", context, res.Err)
		}
		return res, model
	}
	plain, plainModel := run("")
	compacted, model := run(fmt.Sprintf("{max_input_tokens: %d, keep_recent_turns: 6}", budget))

	reqs := model.all()
	agentCalls, summaries := 0, 0
	for i, r := range reqs {
		if got := estimate(r); got > budget {
			t.Fatalf("request %d (summary %v) is %d tokens, over the budget of %d", i, r.summary, got, budget)
		}
		if r.summary {
			summaries++
		} else {
			agentCalls++
		}
	}
	if agentCalls < 300 || agentCalls != len(plainModel.all()) {
		t.Fatalf("%d model turns with compaction, %d without; want the same, at least 300", agentCalls, len(plainModel.all()))
	}
	if maxPlain := largest(plainModel.all()); maxPlain <= 10*budget {
		t.Fatalf("without compaction the largest request is only %d tokens; the thread is not long enough to test", maxPlain)
	}
	compactions := eventsOf(compacted.Events, stream.TypeContextCompacted)
	if len(compactions) == 0 || summaries < len(compactions) {
		t.Fatalf("%d context_compacted events, %d summary requests", len(compactions), summaries)
	}
	checkCompactedData(t, compactions[0])
	t.Logf("%d turns, %d compactions, largest request %d tokens with compaction, %d without", agentCalls, len(compactions), largest(reqs), largest(plainModel.all()))
	for _, field := range []string{"todos"} {
		if string(plain.Values[field]) != string(compacted.Values[field]) {
			t.Errorf("%s differ:\nwithout compaction %s\nwith compaction    %s", field, plain.Values[field], compacted.Values[field])
		}
	}
	if a, b := planItems(t, plain.Values), planItems(t, compacted.Values); a != b || !strings.Contains(a, `"completed"`) {
		t.Errorf("harness items differ:\nwithout compaction %s\nwith compaction    %s", a, b)
	}
	// The premature answer came after a compaction and was refused.
	types := dawntest.Types(compacted.Events)
	first, rejected := indexOf(types, stream.TypeContextCompacted), indexOf(types, stream.TypeAnswerRejected)
	if first < 0 || rejected < first {
		t.Fatalf("answer_rejected at %d, the first context_compacted at %d: the gate did not refuse an answer after a compaction", rejected, first)
	}
	var st struct {
		Summary  string `json:"summary"`
		Messages int    `json:"messages"`
		Count    int    `json:"count"`
	}
	if err := json.Unmarshal(compacted.Values["compaction"], &st); err != nil || st.Count != len(compactions) || st.Messages == 0 || st.Summary == "" {
		t.Fatalf("compaction state %s (%v), %d compactions", compacted.Values["compaction"], err, len(compactions))
	}
	var msgs []json.RawMessage
	_ = json.Unmarshal(compacted.Values["messages"], &msgs)
	var plainMsgs []json.RawMessage
	_ = json.Unmarshal(plain.Values["messages"], &plainMsgs)
	if len(msgs) != len(plainMsgs) {
		t.Fatalf("the compacted thread keeps %d messages, the plain one %d: compaction must not drop messages", len(msgs), len(plainMsgs))
	}
}

// largest is the largest estimate of reqs.
func largest(reqs []request) int {
	n := 0
	for _, r := range reqs {
		n = max(n, estimate(r))
	}
	return n
}

func eventsOf(events []stream.Event, typ string) []stream.Event {
	var out []stream.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// checkCompactedData checks a context_compacted event's data: exactly
// its three counts, before over the budget and after under it.
func checkCompactedData(t *testing.T, e stream.Event) {
	t.Helper()
	var d map[string]int
	if err := json.Unmarshal(e.Data, &d); err != nil || len(d) != 3 {
		t.Fatalf("context_compacted data %s: %v", e.Data, err)
	}
	if d["before_tokens"] <= budget || d["after_tokens"] >= budget || d["summarized_messages"] <= 0 {
		t.Fatalf("context_compacted data %s", e.Data)
	}
}

// planItems is the harness plan's items as JSON.
func planItems(t *testing.T, values map[string]json.RawMessage) string {
	t.Helper()
	var p struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(values["plan"], &p); err != nil {
		t.Fatalf("plan %s: %v", values["plan"], err)
	}
	return string(p.Items)
}
