package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// The prompt-cache scenario: one thread, two runs; the model rewrites the
// plan on every turn of the first run (turns writeTodos calls, then an
// answer) and answers the second at once.
const (
	cacheTurns     = 12
	cacheFirstUser = "Work through the plan"
	cacheNextUser  = "Anything else?"
	cacheCached    = 1024 // the cached tokens aimock reports on each answer
)

// writeCacheFixtures writes aimock fixtures for the scenario into a temp
// file and returns its path: answer i of the first run (sequenceIndex i)
// rewrites the plan so that item i is in progress, the last one answers.
func writeCacheFixtures(t *testing.T) string {
	t.Helper()
	usage := map[string]any{"prompt_tokens": 2048, "completion_tokens": 16, "prompt_tokens_details": map[string]any{"cached_tokens": cacheCached}}
	var fixtures []map[string]any
	for i := range cacheTurns {
		resp := map[string]any{"content": "Done with the plan.", "usage": usage}
		if i < cacheTurns-1 {
			var todos []map[string]string
			for j := range cacheTurns - 1 {
				status := "pending"
				switch {
				case j < i:
					status = "completed"
				case j == i:
					status = "in_progress"
				}
				todos = append(todos, map[string]string{"content": fmt.Sprintf("Step %d", j+1), "status": status})
			}
			resp = map[string]any{"toolCalls": []map[string]any{{"name": "writeTodos", "arguments": map[string]any{"todos": todos}}}, "usage": usage}
		}
		fixtures = append(fixtures, map[string]any{"match": map[string]any{"userMessage": cacheFirstUser, "sequenceIndex": i}, "response": resp})
	}
	fixtures = append(fixtures, map[string]any{"match": map[string]any{"userMessage": cacheNextUser}, "response": map[string]any{"content": "Nothing else.", "usage": usage}})
	data, err := json.Marshal(map[string]any{"fixtures": fixtures})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prompt_cache.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// journalRequest is a chat completion request as aimock's journal keeps
// it: each message as sent, and the prompt-cache key.
type journalRequest struct {
	Messages       []json.RawMessage `json:"messages"`
	PromptCacheKey string            `json:"prompt_cache_key"`
}

func journalRequests(t *testing.T, mock string) []journalRequest {
	t.Helper()
	resp, err := http.Get(mock + "/__aimock/journal?path=/api/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct {
		Body journalRequest `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatalf("aimock journal: %v", err)
	}
	out := make([]journalRequest, len(entries))
	for i, e := range entries {
		out[i] = e.Body
	}
	return out
}

// stateBlock returns the text of a request's last message when it is the
// per-turn state block (a system message), else "".
func stateBlock(req journalRequest) string {
	var m chatMessage
	if len(req.Messages) == 0 || json.Unmarshal(req.Messages[len(req.Messages)-1], &m) != nil || m.Role != "system" {
		return ""
	}
	if text := m.text(); strings.HasPrefix(text, "## Current state") {
		return text
	}
	return ""
}

// TestPromptsStayCacheable: over the real OpenAI wire, with the stock
// binary, in a thread of two runs whose first rewrites the plan on each of
// its turns, every request's messages begin with the previous request's
// messages except its state block (the live plan, the last message, fresh
// on each request); every request carries the thread as prompt_cache_key;
// and model_call reports the cached input tokens the provider returned.
func TestPromptsStayCacheable(t *testing.T) {
	mock := startAimock(t, writeCacheFixtures(t))
	bin := buildDawn(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"work/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou work through plans.\n",
		"work/plan.md":  "- [ ] Step 1\n",
	})
	// Under /api/v1 aimock answers as OpenRouter does, on the OpenAI wire
	// with usage.prompt_tokens_details (cached tokens) in each answer.
	url := startDawn(t, bin, dir, "OPENAI_BASE_URL="+mock+"/api/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=")
	const thread = "cache-thread"
	var calls, plans int
	for _, user := range []string{cacheFirstUser, cacheNextUser} {
		c, p := cacheRun(t, url, thread, user)
		calls, plans = calls+c, plans+p
	}
	if calls != cacheTurns+1 || plans != cacheTurns-1 {
		t.Fatalf("%d model calls and %d plan updates, want %d and %d", calls, plans, cacheTurns+1, cacheTurns-1)
	}
	reqs := journalRequests(t, mock)
	if len(reqs) != cacheTurns+1 {
		t.Fatalf("aimock got %d requests, want %d", len(reqs), cacheTurns+1)
	}
	checkPrefixes(t, reqs)
	checkStateBlocks(t, reqs, thread)
}

// checkPrefixes checks that the previous request, but for its last message
// (the state block), begins each request.
func checkPrefixes(t *testing.T, reqs []journalRequest) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, req := reqs[i-1].Messages, reqs[i].Messages
		prefix := prev[:len(prev)-1]
		if len(req) <= len(prefix) {
			t.Fatalf("request %d has %d messages, the previous one %d", i, len(req), len(prev))
		}
		for j, m := range prefix {
			if !bytes.Equal(m, req[j]) {
				t.Fatalf("request %d differs from request %d at message %d:\n%s\nthen\n%s", i, i-1, j, m, req[j])
			}
		}
	}
}

// checkStateBlocks checks that each request carries thread as its
// prompt_cache_key and ends with a state block that shows the plan the
// previous turn wrote.
func checkStateBlocks(t *testing.T, reqs []journalRequest, thread string) {
	t.Helper()
	for i, req := range reqs {
		if req.PromptCacheKey != thread {
			t.Errorf("request %d: prompt_cache_key %q, want the thread id %q", i, req.PromptCacheKey, thread)
		}
		block := stateBlock(req)
		if block == "" {
			t.Fatalf("request %d does not end with the state block: %s", i, req.Messages[len(req.Messages)-1])
		}
		if i > 0 && i < cacheTurns-1 && !strings.Contains(block, fmt.Sprintf("- [in_progress] Step %d", i)) {
			t.Errorf("request %d: the state block does not show the plan the last turn wrote:\n%s", i, block)
		}
		if i > 0 && i < cacheTurns && stateBlock(reqs[i-1]) == block {
			t.Errorf("request %d: the state block did not change after a plan change", i)
		}
	}
}

// cacheRun runs user's message on thread and returns the run's model
// calls and plan updates; every model_call must report the cached tokens
// aimock returned.
func cacheRun(t *testing.T, url, thread, user string) (calls, plans int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"route": "/work", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": user}}}})
	for _, e := range readEvents(t, postJSON(t, url+"/threads/"+thread+"/runs/stream", string(body))) {
		switch e.Type {
		case stream.TypeModelCall:
			calls++
			var d struct {
				Cached *int `json:"cached_input_tokens"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil || d.Cached == nil || *d.Cached != cacheCached {
				t.Errorf("model_call %s: want cached_input_tokens %d", e.Data, cacheCached)
			}
		case "plan_update":
			plans++
		case stream.TypeDone:
			if strings.Contains(string(e.Data), "error") {
				t.Fatalf("run %q failed: %s", user, e.Data)
			}
		}
	}
	return calls, plans
}
