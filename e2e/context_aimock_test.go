package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	tokencount "github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/thread"
)

// contextBudget is the route's context.max_input_tokens.
const contextBudget = 1500

// estimateTokens is a chat request's input tokens as Dawn estimates them
// for the route's model (tokens.EstimateMessages).
func estimateTokens(r chatRequest) int {
	var system string
	var msgs []thread.Message
	for i, m := range r.Messages {
		if i == 0 && m.Role == "system" {
			system = m.text()
			continue
		}
		tm := thread.Message{Role: m.Role, Content: m.text()}
		for _, c := range m.ToolCalls {
			tm.ToolCalls = append(tm.ToolCalls, thread.ToolCall{ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(c.Function.Arguments)})
		}
		msgs = append(msgs, tm)
	}
	return tokencount.EstimateMessages("openai:gpt-4o-mini", system, msgs, nil)
}

// TestAimockContextCompaction runs the stock dawn binary on a route with
// context: {max_input_tokens: 1500, keep_recent_turns: 2} on
// openai:gpt-4o-mini pointed at aimock, for a thread of eight runs that
// together exceed the budget: a run's stream carries context_compacted,
// aimock's journal holds the summary model's request, every request to
// the model from then on (the summary's included) is under the budget and
// begins with the summary, and the thread keeps every message.
func TestAimockContextCompaction(t *testing.T) {
	bin := buildDawn(t)
	mock := startAimock(t, "testdata/context_compaction.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "ledger", "agent.md"), "---\nmodel: openai:gpt-4o-mini\ncontext: {max_input_tokens: 1500, keep_recent_turns: 2}\n---\nYou check the ledger with the user.\n")
	url := startDawn(t, bin, app, aimockEnv(mock)...)

	const runs = 8
	compactedAt := -1
	for i := 1; i <= runs; i++ {
		msg := fmt.Sprintf("Turn %d: ", i) + strings.Repeat(fmt.Sprintf("entry %d of the ledger is for office supplies; ", i), 12)
		events := readEvents(t, postJSON(t, url+"/threads/ledger-1/runs/stream", userRun("/ledger", msg)))
		types := strings.Join(eventTypes(events), ",")
		if !strings.HasSuffix(types, "done") || strings.Contains(types, "error") {
			t.Fatalf("run %d: %s", i, types)
		}
		for _, e := range events {
			if e.Type != "context_compacted" {
				continue
			}
			var d map[string]int
			if err := json.Unmarshal(e.Data, &d); err != nil || d["before_tokens"] <= contextBudget || d["after_tokens"] > contextBudget || d["summarized_messages"] < 1 {
				t.Fatalf("run %d: context_compacted %s", i, e.Data)
			}
			if compactedAt < 0 {
				compactedAt = i
			}
		}
	}
	if compactedAt < 0 {
		t.Fatalf("no run of the thread was compacted")
	}

	reqs := chatRequests(t, mock)
	summary := -1
	for i, r := range reqs {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].text(), "You condense") {
			summary = i
			break
		}
	}
	if summary < 0 {
		t.Fatalf("aimock's journal holds no request of the summary model (%d requests)", len(reqs))
	}
	largest := 0
	for _, r := range reqs {
		largest = max(largest, estimateTokens(r))
	}
	t.Logf("%d requests, the first compaction in run %d, the summary request is number %d, the largest request %d tokens", len(reqs), compactedAt, summary, largest)
	for i, r := range reqs[summary:] {
		if got := estimateTokens(r); got > contextBudget {
			t.Errorf("request %d after the first compaction is %d tokens, over the budget of %d", summary+i, got, contextBudget)
		}
	}
	last := reqs[len(reqs)-1].Messages
	if len(last) < 3 || !strings.HasPrefix(last[1].text(), "[Summary of the earlier conversation") {
		t.Fatalf("the last request does not begin with the summary: %+v", last)
	}
	var state struct {
		Values struct {
			Messages   []json.RawMessage `json:"messages"`
			Compaction struct {
				Summary string `json:"summary"`
				Count   int    `json:"count"`
			} `json:"compaction"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/ledger-1/state", &state)
	if len(state.Values.Messages) != 2*runs || state.Values.Compaction.Count < 1 || !strings.HasPrefix(state.Values.Compaction.Summary, "Summary:") {
		t.Fatalf("state: %d messages, compaction %+v", len(state.Values.Messages), state.Values.Compaction)
	}
}

// TestAimockCompactionDroppedWithItsMessages runs the stock dawn binary
// on openai:gpt-4o-mini pointed at aimock: a thread is compacted, a client
// then removes every message (LangGraph's __remove_all__, through
// POST /threads/:id/state) and starts anew with one message, and short
// runs grow the new conversation past the old summary's count. No request
// aimock receives from then on carries the old conversation's summary,
// each holds the new conversation's first message, and the thread's
// compaction is gone.
func TestAimockCompactionDroppedWithItsMessages(t *testing.T) {
	bin := buildDawn(t)
	mock := startAimock(t, "testdata/context_rewrite.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "ledger", "agent.md"), "---\nmodel: openai:gpt-4o-mini\ncontext: {max_input_tokens: 1500, keep_recent_turns: 2}\n---\nYou check the ledger with the user.\n")
	url := startDawn(t, bin, app, aimockEnv(mock)...)
	run := func(msg string) {
		t.Helper()
		events := readEvents(t, postJSON(t, url+"/threads/ledger-2/runs/stream", userRun("/ledger", msg)))
		if types := strings.Join(eventTypes(events), ","); !strings.HasSuffix(types, "done") || strings.Contains(types, "error") {
			t.Fatalf("run %q: %s", msg, types)
		}
	}
	type compaction struct {
		Summary  string `json:"summary"`
		Messages int    `json:"messages"`
	}
	var state struct {
		Values struct {
			Compaction compaction `json:"compaction"`
		} `json:"values"`
	}
	for i := 1; i <= 8; i++ {
		run(fmt.Sprintf("Turn %d: ", i) + strings.Repeat(fmt.Sprintf("entry %d of the ledger is for office supplies; ", i), 12))
	}
	getJSON(t, url+"/threads/ledger-2/state", &state)
	old := state.Values.Compaction
	if old.Summary == "" || old.Messages < 4 {
		t.Fatalf("the first conversation was not compacted: %+v", old)
	}

	resp := postJSON(t, url+"/threads/ledger-2/state", `{"values":{"messages":[{"type":"remove","id":"__remove_all__"},{"type":"human","content":"A fresh start: the staff ledger.","id":"fresh"}]}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("removing every message: %d %s", resp.StatusCode, body)
	}
	from := len(chatRequests(t, mock))
	for i := 0; i <= old.Messages/2+1; i++ {
		run(fmt.Sprintf("Short question %d about the staff ledger.", i))
	}
	reqs := chatRequests(t, mock)[from:]
	if len(reqs) < old.Messages/2+2 {
		t.Fatalf("aimock got %d requests after the removal, want one a run", len(reqs))
	}
	for i, r := range reqs {
		var text strings.Builder
		for _, m := range r.Messages {
			text.WriteString(m.text())
			text.WriteString("\n")
		}
		if strings.HasPrefix(r.Messages[0].text(), "You condense") {
			t.Fatalf("request %d after the removal is a summary request: the new conversation was to stay under the budget", i)
		}
		if strings.Contains(text.String(), old.Summary) {
			t.Fatalf("request %d after the removal carries the old conversation's summary %q", i, old.Summary)
		}
		if !strings.Contains(text.String(), "A fresh start") {
			t.Fatalf("request %d after the removal lost the new conversation's first message:\n%s", i, text.String())
		}
	}
	state.Values.Compaction = compaction{}
	getJSON(t, url+"/threads/ledger-2/state", &state)
	if state.Values.Compaction.Summary != "" {
		t.Fatalf("after the new conversation the compaction is still %+v", state.Values.Compaction)
	}
}
