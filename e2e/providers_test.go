package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestProvidersAgainstAimock runs the plan-then-answer flow on each provider
// that aimock speaks the wire protocol of: Gemini's REST API (and its SSE
// stream), and an OpenAI-compatible server at a base URL of its own. The
// model writes a plan with a tool call, reads the tool result and answers.
func TestProvidersAgainstAimock(t *testing.T) {
	mock := startAimock(t, "testdata/plan_then_answer.json")
	env := map[string]string{
		models.EnvGeminiKey: "test", models.EnvGeminiBaseURL: mock + "/v1beta",
		models.EnvCompatibleBaseURL: mock + "/v1",
	}
	for _, spec := range []string{"gemini:gemini-2.0-flash", "openai-compatible:Qwen/Qwen2.5-7B-Instruct"} {
		t.Run(spec, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"support/[tenant]/agent.md": "---\nmodel: " + spec + "\n---\nYou help customers.\n",
				"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Write the final response\n",
			}
			writeFiles(t, dir, files)
			h := dawntest.New(t, dir, nil, dawntest.Options{
				StorePath: filepath.Join(t.TempDir(), "dawn.db"),
				Models: func(spec string) (llms.Model, error) {
					return models.New(spec, func(k string) string { return env[k] })
				},
			})

			events := readEvents(t, postJSON(t, h.URL+"/threads/s/runs/stream", runBody("/support/acme")))
			var types []string
			var text strings.Builder
			for _, e := range events {
				if e.Type == stream.TypeChunk {
					var s string
					_ = json.Unmarshal(e.Data, &s)
					text.WriteString(s)
					continue
				}
				types = append(types, e.Type)
			}
			// The model's plan adds two items to plan.md's: plan_revised
			// follows the plan_update.
			const want = "model_call,tool_call,tool_result,plan_update,plan_revised,model_call,done"
			if got := strings.Join(types, ","); got != want {
				t.Errorf("stream event types (without chunks) = %s, want %s; last: %s", got, want, events[len(events)-1].Data)
			}
			if text.String() != answer {
				t.Errorf("streamed answer = %q, want %q", text.String(), answer)
			}

			resp := postJSON(t, h.URL+"/threads/w/runs/wait", runBody("/support/acme"))
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				e := decodeAPIError(t, resp)
				t.Fatalf("runs/wait: %d %s: %s", resp.StatusCode, e.Kind, e.Message)
			}
			var values struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&values); err != nil {
				t.Fatal(err)
			}
			last := values.Messages[len(values.Messages)-1]
			if last.Role != "assistant" || last.Content != answer {
				t.Errorf("runs/wait last message = %s %q, want the assistant's %q", last.Role, last.Content, answer)
			}
		})
	}
	// Each provider spoke its own protocol to aimock.
	resp, err := http.Get(mock + "/__aimock/journal")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var journal []struct {
		Path string `json:"path"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&journal); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range journal {
		seen[e.Path]++
	}
	want := map[string]int{
		"/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse": 2,
		"/v1beta/models/gemini-2.0-flash:generateContent":               2,
		"/v1/chat/completions": 4, // openai-compatible, streamed and not
	}
	for path, n := range want {
		if seen[path] != n {
			t.Errorf("aimock saw %d requests on %s, want %d (journal paths: %v)", seen[path], path, n, seen)
		}
	}
}
