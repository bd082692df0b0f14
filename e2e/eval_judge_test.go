package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/cli"
)

// TestEvalJudgeOverAimock: dawn eval runs a route on openai:… against
// aimock and asks the judge model (eval.judge_model) to score each
// criterion over the same OpenAI wire. The judge's requests are in aimock's
// journal under the judge's model name; a criterion it scores below the
// threshold fails its case, and eval exits 1 naming the case and judge.
// The route's own case also checks max_turns and max_input_tokens, which
// read the usage the provider reports.
func TestEvalJudgeOverAimock(t *testing.T) {
	mock := startAimock(t, filepath.Join("testdata", "eval_judge.json"))
	dir := t.TempDir()
	files := map[string]string{
		"dawn.yaml":        "model: openai:gpt-4o-mini\neval:\n  judge_model: openai:judge-model\n",
		"support/agent.md": "---\ndescription: Support.\n---\nYou answer support questions.\n",
		"support/evals/judged.yaml": `cases:
  - name: good standing
    input: {message: Help me with my account}
    expect:
      answer_contains: [good standing]
      max_turns: 1
      max_input_tokens: 100000
      judge: [The answer says the account is in good standing.]
  - name: offers a refund
    input: {message: Help me with my account}
    expect:
      judge: {criteria: [The answer offers a refund.], threshold: 0.5}
`,
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"OPENAI_BASE_URL": mock + "/v1", "OPENAI_API_KEY": "test"}
	var stdout, stderr bytes.Buffer
	code := cli.Run([]string{"eval", "--app", dir, "--out", filepath.Join(dir, "out")}, cli.Config{
		Stdout: &stdout, Stderr: &stderr, Env: func(k string) string { return env[k] }, ToolsKnown: true,
	})
	if code != cli.ExitProblem {
		t.Fatalf("dawn eval exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	want := `FAIL case "offers a refund" (/support, ` + filepath.Join(dir, "support", "evals", "judged.yaml") + `:9): judge passed 0/1: criterion 1 scored 0.10 (threshold 0.50): No refund is offered.`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks\n%s\ngot:\n%s", want, stderr.String())
	}
	if strings.Contains(stderr.String(), `FAIL case "good standing"`) {
		t.Errorf("the case the judge passed is reported failing:\n%s", stderr.String())
	}
	judged := map[string]bool{}
	for _, r := range judgeRequests(t, mock) {
		if r.Model != "judge-model" {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.text(), "Final answer:\nYour account is in good standing.") {
				_, criterion, _ := strings.Cut(m.text(), "Criterion: ")
				judged[strings.TrimSpace(criterion)] = true
			}
		}
	}
	for _, c := range []string{"The answer says the account is in good standing.", "The answer offers a refund."} {
		if !judged[c] {
			t.Errorf("aimock's journal holds no judge request (model judge-model) with the answer for %q; judged: %v", c, judged)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "out", "eval.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) || !strings.Contains(string(data), "scored 0.90") {
		t.Errorf("eval.json does not record the judge's score 0.90:\n%s", data)
	}
}

// judgeRequest is a chat completion request in aimock's journal, with its
// model.
type judgeRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
}

func judgeRequests(t *testing.T, mock string) []judgeRequest {
	t.Helper()
	var out []judgeRequest
	for _, r := range rawChatRequests(t, mock) {
		var jr judgeRequest
		if err := json.Unmarshal(r, &jr); err != nil {
			t.Fatalf("aimock journal entry: %v", err)
		}
		out = append(out, jr)
	}
	return out
}

// rawChatRequests returns the bodies of the chat completion requests aimock
// at mock has received, oldest first.
func rawChatRequests(t *testing.T, mock string) []json.RawMessage {
	t.Helper()
	resp, err := http.Get(mock + "/__aimock/journal?path=/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatalf("aimock journal: %v", err)
	}
	out := make([]json.RawMessage, len(entries))
	for i, e := range entries {
		out[i] = e.Body
	}
	return out
}
