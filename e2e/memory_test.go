package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLongTermMemoryOnAimock: the stock binary, on aimock over the real
// OpenAI wire, runs a route with memory: on. The model remembers a fact
// in thread 1; in thread 2 its recall finds it, and only a tool result
// holding the fact reaches the fixture that answers. The memory is an
// item of the Store API under ["memories", "/assistant"].
func TestLongTermMemoryOnAimock(t *testing.T) {
	mock := startAimock(t, "testdata/long_term_memory.json")
	bin := buildDawn(t)
	app := t.TempDir()
	writeFiles(t, app, map[string]string{
		"assistant/agent.md": "---\nmodel: openai:gpt-4o-mini\nmemory: true\n---\nYou help, and remember what the user tells you about themselves.\n",
	})
	url := startDawn(t, bin, app, "OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=", "DAWN_STORE=")

	for _, c := range []struct{ thread, message, answer string }{
		{"m1", "Remember that my favorite color is teal", "Noted."},
		{"m2", "What is my favorite color?", "Your favorite color is teal."},
	} {
		events := readEvents(t, postJSON(t, url+"/threads/"+c.thread+"/runs/stream", userRun("/assistant", c.message)))
		if last := string(events[len(events)-1].Data); !strings.Contains(last, c.answer) {
			t.Fatalf("thread %s: done %s (%s)", c.thread, last, strings.Join(eventTypes(events), ","))
		}
	}

	resp, err := http.Get(url + "/store/items?namespace=memories./assistant&key=favorite-color")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"value":{"text":"The user's favorite color is teal","status":"approved","written_by":{"thread":"m1"`) {
		t.Fatalf("GET /store/items = %d %s", resp.StatusCode, body)
	}
}
