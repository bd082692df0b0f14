package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// answerText is the answer a client shows from events, following the
// README: chunk text accumulates, and answer_rejected takes back the chunks
// that came right before it (since the last event of another type).
func answerText(events []stream.Event, prefix string) string {
	var shown, turn strings.Builder
	for _, e := range events {
		switch e.Type {
		case prefix + stream.TypeChunk:
			turn.WriteString(stream.ChunkText(e.Data))
			continue
		case prefix + stream.TypeAnswerRejected:
			turn.Reset()
		}
		shown.WriteString(turn.String())
		turn.Reset()
	}
	return shown.String() + turn.String()
}

// TestGateRejectedAnswerIsTakenBack: on a route whose plan the harness
// owns, a premature final answer streams as chunks, then the gate refuses
// it. The stream says so with answer_rejected right after those chunks,
// so a client that follows the README never shows it as the answer; the
// saved event log holds the same events.
func TestGateRejectedAnswerIsTakenBack(t *testing.T) {
	model := dawntest.Script().
		Reply("All done, bye!"). // premature: Step 1 is open
		CallTool("writeTodos", list(1, 1, false)).
		Reply("Finished for real.")
	h := apptest.New(t, enforcedApp(t, "", 1), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/r/runs/stream", runBody("/job", "go"))
	runID := resp.Header.Get("Dawn-Run-Id")
	events := readSSE(t, resp)

	at := -1
	for i, e := range events {
		if e.Type == stream.TypeAnswerRejected {
			at = i
			break
		}
	}
	if at < 1 || events[at-1].Type != stream.TypeChunk {
		t.Fatalf("no answer_rejected right after the rejected answer's chunks: %v", dawntest.Types(events))
	}
	var d struct{ Reason string }
	if err := json.Unmarshal(events[at].Data, &d); err != nil || !strings.Contains(d.Reason, "not accepted") || !strings.Contains(d.Reason, `"Step 1"`) {
		t.Fatalf("answer_rejected data = %s (%v)", events[at].Data, err)
	}
	if got := answerText(events, ""); got != "Finished for real." {
		t.Fatalf("a client following the README shows %q, want only the accepted answer", got)
	}
	saved, err := h.Store.Events(t.Context(), runID, 0)
	if err != nil || len(saved) != len(events) || saved[at].Type != stream.TypeAnswerRejected || string(saved[at].Data) != string(events[at].Data) {
		t.Fatalf("saved events (%v) differ from the stream: %v", err, dawntest.Types(saved))
	}
}
