package planview

import (
	"bytes"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// showAll feeds events to r and returns what it wrote.
func showAll(t *testing.T, r Renderer, buf *bytes.Buffer, events ...stream.Event) string {
	t.Helper()
	for _, e := range events {
		if err := r.Event(e); err != nil {
			t.Fatalf("Event(%s): %v", e.Type, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.String()
}

func TestTTY(t *testing.T) {
	first := planEvent(Todo{"Understand the request", InProgress}, Todo{"Answer", Pending})
	second := planEvent(Todo{"Understand the request", Completed}, Todo{"Answer", InProgress})
	tests := []struct {
		name   string
		events []stream.Event
		want   string
	}{
		{
			name:   "second update redraws the block in place",
			events: []stream.Event{first, second},
			want: "Plan (0/2 done)\n  ▶ Understand the request\n  ○ Answer\n" +
				"\x1b[3A" +
				"\x1b[2KPlan (1/2 done)\n\x1b[2K  ✓ Understand the request\n\x1b[2K  ▶ Answer\n",
		},
		{
			name:   "text streams below the block, a later update prints a new block",
			events: []stream.Event{first, chunkEvent("Let me "), chunkEvent("check."), second, chunkEvent("Done.")},
			want: "Plan (0/2 done)\n  ▶ Understand the request\n  ○ Answer\n" +
				"\nLet me check.\n" +
				"\nPlan (1/2 done)\n  ✓ Understand the request\n  ▶ Answer\n" +
				"\nDone.\n",
		},
		{
			name: "a shorter block clears the lines left over",
			events: []stream.Event{
				first,
				subagentEvent("researcher", "call_x", 1, Todo{"Find", Pending}),
				stream.Event{Type: SubagentPlanUpdate, Data: []byte(`{"todos":[],"call_id":"call_x","subagent":"researcher","depth":1}`)},
			},
			want: "Plan (0/2 done)\n  ▶ Understand the request\n  ○ Answer\n" +
				"\x1b[3A" +
				"\x1b[2KPlan (0/2 done)\n\x1b[2K  ▶ Understand the request\n\x1b[2K  ○ Answer\n" +
				"\x1b[2K  ↳ researcher (task call_x) 0/1 done\n\x1b[2K    ○ Find\n" +
				"\x1b[5A" +
				"\x1b[2KPlan (0/2 done)\n\x1b[2K  ▶ Understand the request\n\x1b[2K  ○ Answer\n" +
				"\x1b[2K  ↳ researcher (task call_x) 0/0 done\n" +
				"\x1b[2K\n\x1b[1A",
		},
		{
			name:   "tool lines end the in-place block; writeTodos calls are not shown",
			events: []stream.Event{toolCallEvent("writeTodos", `{}`), first, toolCallEvent("lookupAccount", `{"tenant":"acme"}`), second},
			want: "Plan (0/2 done)\n  ▶ Understand the request\n  ○ Answer\n" +
				"tool: lookupAccount({\"tenant\":\"acme\"})\n" +
				"\nPlan (1/2 done)\n  ✓ Understand the request\n  ▶ Answer\n",
		},
		{
			name:   "escape sequences in model text are dropped",
			events: []stream.Event{chunkEvent("red \x1b[31mtext\r\n\tok")},
			want:   "red [31mtext\n\tok\n",
		},
		{
			name:   "subagent text and other events are not shown",
			events: []stream.Event{stream.Forward(stream.Chunk("inner"), stream.Subagent{CallID: "c1", Name: "researcher", RouteID: "/research/researcher", Depth: 1}), stream.New(stream.TypeDone, map[string]any{"output": map[string]any{}})},
			want:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if got := showAll(t, NewTTY(&buf, 0), &buf, tt.events...); got != tt.want {
				t.Errorf("output =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestTTYCutsLinesToWidth(t *testing.T) {
	var buf bytes.Buffer
	got := showAll(t, NewTTY(&buf, 12), &buf,
		planEvent(Todo{"A very long plan item", Pending}),
		toolCallEvent("lookupAccount", `{"tenant":"acme"}`))
	want := "Plan (0/1 d…\n  ○ A very…\ntool: looku…\n"
	if got != want {
		t.Errorf("output =\n%q\nwant\n%q", got, want)
	}
}

func TestPlain(t *testing.T) {
	var buf bytes.Buffer
	got := showAll(t, NewPlain(&buf), &buf,
		toolCallEvent("writeTodos", `{"todos":[]}`),
		planEvent(Todo{"a", Completed}, Todo{"b", InProgress}, Todo{"c", Pending}),
		toolCallEvent("lookupAccount", `{"tenant": "acme"}`),
		subagentEvent("researcher", "call_x", 1, Todo{"Find", InProgress}),
		stream.Forward(stream.Chunk("inner"), stream.Subagent{CallID: "c1", Name: "researcher", RouteID: "/research/researcher", Depth: 1}),
		chunkEvent("Your account "),
		chunkEvent("is fine."),
		planEvent(),
		chunkEvent("Bye"),
		stream.New(stream.TypeDone, map[string]any{"output": map[string]any{}}),
	)
	want := "plan: [x] a | [>] b | [ ] c\n" +
		"tool: lookupAccount({\"tenant\":\"acme\"})\n" +
		"plan (researcher): [>] Find\n" +
		"Your account is fine.\n" +
		"plan: (empty)\n" +
		"Bye\n"
	if got != want {
		t.Errorf("output =\n%q\nwant\n%q", got, want)
	}
}

// TestRejectedAnswerIsMarked: text the stream takes back with
// answer_rejected was already on the screen, so both renderers say, on a
// line below it, that it was not the answer; the accepted answer follows.
func TestRejectedAnswerIsMarked(t *testing.T) {
	rejected := stream.New(stream.TypeAnswerRejected, map[string]string{"reason": "Plan harness: your answer was not accepted"})
	events := []stream.Event{
		chunkEvent("All "), chunkEvent("done!"), rejected,
		planEvent(Todo{"a", Completed}),
		stream.New("subagent."+stream.TypeAnswerRejected, map[string]string{"reason": "x"}),
		chunkEvent("Finished."),
	}
	var plain bytes.Buffer
	got := showAll(t, NewPlain(&plain), &plain, events...)
	want := "All done!\n" + RejectedLine + "\nplan: [x] a\nFinished.\n"
	if got != want {
		t.Errorf("plain output =\n%q\nwant\n%q", got, want)
	}
	var tty bytes.Buffer
	got = showAll(t, NewTTY(&tty, 0), &tty, events...)
	want = "All done!\n" + RejectedLine + "\n\nPlan (1/1 done)\n  ✓ a\n\nFinished.\n"
	if got != want {
		t.Errorf("tty output =\n%q\nwant\n%q", got, want)
	}
}
