package contextwindow_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// readScript reads a page a turn for pages turns and answers; from then
// on it answers every request in words.
func readScript(pages int) func(n int) *llms.ContentChoice {
	return func(n int) *llms.ContentChoice {
		if n >= pages {
			return &llms.ContentChoice{Content: "Noted."}
		}
		return call(n, "fetchPage", map[string]int{"page": n})
	}
}

// compactionOf is the thread's compaction state value.
func compactionOf(t *testing.T, srv *dawntest.Server, id string) (summary string, messages int) {
	t.Helper()
	var c struct {
		Summary  string `json:"summary"`
		Messages int    `json:"messages"`
	}
	_ = json.Unmarshal(srv.State(t, id)["compaction"], &c)
	return c.Summary, c.Messages
}

// TestCompactionDroppedWithItsMessages: after a client removes every
// message of a compacted thread (LangGraph's REMOVE_ALL_MESSAGES, over
// HTTP), no model request of the new conversation carries the old
// conversation's summary, and none loses the new conversation's first
// message once it grows past the old summary's count.
func TestCompactionDroppedWithItsMessages(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"report/agent.md": "---\ncontext: {max_input_tokens: 2500, keep_recent_turns: 1}\n---\nYou read the report."})
	model := &scriptModel{script: readScript(6)}
	srv := dawntest.New(t, dir, model, dawntest.Options{Tools: []capabilities.AppTool{pageTool()}})
	if res := srv.Run(t, "c1", "/report", "Read the first pages."); res.Err != nil {
		t.Fatal(res.Err)
	}
	oldSummary, covered := compactionOf(t, srv, "c1")
	if oldSummary == "" || covered < 4 {
		t.Fatalf("the first run did not compact: summary %q over %d messages", oldSummary, covered)
	}
	resp, err := http.Post(srv.URL+"/threads/c1/state", "application/json", strings.NewReader(`{"values":{"messages":[{"type":"remove","id":"__remove_all__"},{"type":"human","content":"A fresh start: read the staff pages.","id":"s"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("removing every message: %d %s", resp.StatusCode, body)
	}
	// Short runs grow the new conversation past the old summary's count
	// without a compaction of their own.
	from := len(model.all())
	for i := 0; i <= covered/2+1; i++ {
		if res := srv.Run(t, "c1", "/report", "Another short question."); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	reqs := model.all()[from:]
	for i, r := range reqs {
		var text strings.Builder
		for _, m := range r.msgs {
			for _, p := range m.Parts {
				if tc, ok := p.(llms.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
		}
		if strings.Contains(text.String(), oldSummary) {
			t.Fatalf("request %d of the new conversation (summary request %v) carries the old conversation's summary %q", i, r.summary, oldSummary)
		}
		if !r.summary && !strings.Contains(text.String(), "A fresh start") {
			t.Fatalf("request %d lost the new conversation's first message", i)
		}
	}
	if summary, _ := compactionOf(t, srv, "c1"); summary != "" {
		t.Fatalf("after the new conversation the compaction is still %q", summary)
	}
}
