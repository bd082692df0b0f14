package dawntest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// TestEval: Eval runs a case as a subtest on the scripted model, and asks
// the same model to judge when dawn.yaml names no judge model.
func TestEval(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"support/[tenant]/agent.md": "---\ndescription: support\n---\nYou help customers.",
		"support/[tenant]/evals/basics.yaml": `cases:
  - name: looks up the account
    input: {message: Help me with my account, params: {tenant: acme}}
    expect:
      tools_called: [{name: lookupAccount, args: {email: ann@acme.com}}]
      answer_contains: [good standing]
      judge: [The answer says the account is in good standing.]
`,
	})
	var judged string
	m := dawntest.Script().
		CallTool("lookupAccount", map[string]any{"email": "ann@acme.com"}).
		Reply("Your account is in good standing.").
		Then(func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
			judged = apptest.LastUser(msgs)
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: `{"score": 0.9, "reason": "it says so"}`}}}, nil
		})
	lookup := dawn.Tool("lookupAccount", "Look up an account.", func(_ context.Context, in struct {
		Email string `json:"email"`
	}) (map[string]string, error) {
		return map[string]string{"status": "active", "email": in.Email}, nil
	})
	dawntest.Eval(t, dir, m, dawntest.Options{Tools: dawn.Tools(lookup)})
	if m.Calls() != 3 {
		t.Errorf("the model was called %d times, want 3 (two turns and the judge)", m.Calls())
	}
	for _, want := range []string{"Final answer:\nYour account is in good standing.", "Criterion: The answer says the account is in good standing."} {
		if !strings.Contains(judged, want) {
			t.Errorf("the judge's request lacks %q:\n%s", want, judged)
		}
	}
}

// TestEvalProjectLayout: Eval takes the folder dawn new writes (the main
// package, with the app in app/) as docs/evaluate.md shows, and reads the
// app's dawn.yaml: here its model, a script beside it.
func TestEvalProjectLayout(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"go.mod":                     "module example.com/helper\n",
		"app/dawn.yaml":              "model: script:turns.script.yaml\n",
		"app/turns.script.yaml":      "turns: [{text: Scripted hello.}]\n",
		"app/assistant/agent.md":     "---\ndescription: helps\n---\nYou help.",
		"app/assistant/evals/a.yaml": "cases:\n  - name: says hello\n    input: {message: hi}\n    expect: {answer_contains: [Scripted hello]}\n",
	})
	dawntest.Eval(t, dir, nil, dawntest.Options{})
}
