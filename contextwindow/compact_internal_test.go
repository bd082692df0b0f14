package contextwindow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// convo is a conversation of n turns after a user message: each an
// assistant call and its two results, of size bytes each.
func convo(n, size int) []thread.Message {
	msgs := []thread.Message{{Role: thread.RoleUser, Content: "start"}}
	for i := range n {
		id := strconv.Itoa(i)
		msgs = append(msgs,
			thread.Message{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "a" + id, Name: "t"}, {ID: "b" + id, Name: "t"}}},
			thread.Message{Role: thread.RoleTool, ToolCallID: "a" + id, Name: "t", Content: strings.Repeat("x", size)},
			thread.Message{Role: thread.RoleTool, ToolCallID: "b" + id, Name: "t", Content: strings.Repeat("y", size)},
		)
	}
	return msgs
}

// bytesTokens counts four bytes a token.
func bytesTokens(msgs []thread.Message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + len(m.Content)/4
	}
	return n
}

// TestBoundary: the cut keeps keep_recent_turns turns, fewer when they do
// not fit the budget with a summary, never fewer than one, and always at
// the start of a turn, never between a call and its results.
func TestBoundary(t *testing.T) {
	for _, tc := range []struct {
		name              string
		turns, size, keep int
		budget            int
		wantKept          int
	}{
		{"keeps six turns", 20, 400, 6, 8000, 6},
		{"fewer when six do not fit", 20, 4000, 6, 8000, 3},
		{"at least the latest turn", 20, 40000, 6, 8000, 1},
		{"fewer turns than kept", 3, 100, 6, 8000, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := convo(tc.turns, tc.size)
			c := compactor{settings: Settings{MaxInputTokens: tc.budget, KeepRecentTurns: tc.keep}}
			cut := c.boundary(capabilities.ModelTurn{Tokens: bytesTokens}, Compaction{}, msgs)
			if r := msgs[cut].Role; r != thread.RoleAssistant {
				t.Fatalf("cut at a %s message", r)
			}
			if kept := (len(msgs) - cut) / 3; kept != tc.wantKept {
				t.Fatalf("kept %d turns, want %d", kept, tc.wantKept)
			}
		})
	}
}

// TestSummarizeInParts: a stretch larger than one summary request is
// summarized a part at a time, each part's request under the budget and
// given the summary so far; a failing summary model is an error that
// names context.summary_model.
func TestSummarizeInParts(t *testing.T) {
	c := compactor{settings: Settings{MaxInputTokens: 2000, KeepRecentTurns: 2, SummaryModel: "test:small"}}
	var asked []string
	turn := capabilities.ModelTurn{Complete: func(_ context.Context, model, system string, msgs []thread.Message) (string, error) {
		if model != "test:small" {
			return "", fmt.Errorf("model %q", model)
		}
		if (len(system)+len(msgs[0].Content))/3 > 2000 {
			t.Fatalf("a summary request of %d bytes", len(system)+len(msgs[0].Content))
		}
		asked = append(asked, msgs[0].Content)
		return fmt.Sprintf("summary %d", len(asked)), nil
	}}
	got, err := c.summarize(context.Background(), turn, "summary 0", convo(30, 500))
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) < 3 || got != fmt.Sprintf("summary %d", len(asked)) {
		t.Fatalf("%d requests, summary %q", len(asked), got)
	}
	for i, a := range asked {
		if !strings.Contains(a, fmt.Sprintf("Summary of the even earlier conversation:\nsummary %d", i)) {
			t.Fatalf("request %d does not carry the summary so far:\n%.200s", i, a)
		}
	}
	turn.Complete = func(context.Context, string, string, []thread.Message) (string, error) {
		return "", errors.New("refused")
	}
	if _, err := c.summarize(context.Background(), turn, "", convo(2, 10)); err == nil || !strings.Contains(err.Error(), "context.summary_model") {
		t.Fatalf("a failing summary model: %v", err)
	}
}

// FuzzPageText: a page read at any offset, of any stored text, is a run
// of whole characters of the text, and its header says where it sits.
func FuzzPageText(f *testing.F) {
	f.Add("héllo wörld, ünïcode ✓ text", int64(2), int64(5))
	f.Add("abc", int64(0), int64(10))
	f.Add("✓✓✓✓", int64(1), int64(4))
	f.Fuzz(func(t *testing.T, text string, offset, limit int64) {
		if !utf8.ValidString(text) || offset < 0 || limit <= 0 || offset >= int64(len(text)) {
			return
		}
		end := min(offset+limit, int64(len(text)))
		page := capabilities.ToolOutputPage{Data: []byte(text[offset:end]), Total: int64(len(text))}
		got := pageText("out_x", page, offset)
		header, body, ok := strings.Cut(got, "\n")
		if !ok || !utf8.ValidString(body) {
			t.Fatalf("page %q", got)
		}
		var from, to, total int64
		if _, err := fmt.Sscanf(header, "[bytes %d to %d of %d", &from, &to, &total); err != nil {
			t.Fatalf("header %q: %v", header, err)
		}
		if total != int64(len(text)) || from < offset || to > end || text[from:to] != body {
			t.Fatalf("header %q, body %q of %q at %d+%d", header, body, text, offset, limit)
		}
	})
}

// TestCompactionRemovedMessage: when a message the summary stands for is
// removed from the thread (a client's update by id), the summary is
// dropped rather than laid over the shifted messages, where it would
// stand in for a tool call whose result is then sent alone; what is over
// the budget is summarized afresh, from the thread as it now is.
func TestCompactionRemovedMessage(t *testing.T) {
	c := compactor{settings: Settings{MaxInputTokens: 4000, KeepRecentTurns: 2}}
	asked := 0
	turn := capabilities.ModelTurn{Tokens: bytesTokens, Complete: func(context.Context, string, string, []thread.Message) (string, error) {
		asked++
		return fmt.Sprintf("summary %d", asked), nil
	}}
	turn.Messages = convo(12, 1000)
	view, err := c.beforeModel(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	var st Compaction
	if err := json.Unmarshal(view.Update[Field], &st); err != nil || !strings.HasPrefix(st.Summary, "summary ") || st.Covers == "" {
		t.Fatalf("the first compaction: %+v, %v", st, err)
	}
	// The thread as it was keeps its compaction.
	turn.State = thread.State{Field: view.Update[Field]}
	if view, err = c.beforeModel(context.Background(), turn); err != nil || len(view.Update) != 0 || !strings.HasSuffix(view.Messages[0].Content, st.Summary) {
		t.Fatalf("the same thread again: update %s, first message %q, %v", view.Update, view.Messages[0].Content, err)
	}
	// The first message is removed: every later one moves up by one.
	turn.Messages = turn.Messages[1:]
	view, err = c.beforeModel(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]bool{}
	for i, m := range view.Messages {
		if strings.HasSuffix(m.Content, st.Summary) {
			t.Fatalf("message %d of the view is the summary of the messages before the removal", i)
		}
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
		if m.Role == thread.RoleTool && !calls[m.ToolCallID] {
			t.Fatalf("message %d of the view is the result of call %s, which the view does not hold", i, m.ToolCallID)
		}
	}
	var next Compaction
	if err := json.Unmarshal(view.Update[Field], &next); err != nil || next.Summary == "" || next.Summary == st.Summary || next.Count != 2 || next.Covers == st.Covers {
		t.Fatalf("the compaction after the removal: %+v, %v", next, err)
	}
}
