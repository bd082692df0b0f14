package agent_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
)

// TestRequestOverTheModelWindow: a request that would not fit the model's
// known context window is refused before it is sent, with an error that
// names context.max_input_tokens; a model whose window is unknown is not
// checked.
func TestRequestOverTheModelWindow(t *testing.T) {
	var prompt strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&prompt, "Rule %d: answer about invoice %d. ", i, i*7)
	}
	p := prepare(t, map[string]string{"r/agent.md": prompt.String()})
	for _, tc := range []struct {
		model  string
		refuse bool
	}{
		{"openai:gpt-4", true}, // an 8,192-token window
		{"openai:gpt-4o-mini", false},
		{"ollama:llama3", false},
	} {
		model := dawntest.Script().Reply("ok")
		_, _, err := run(t, p, model, func(c *agent.Config, _ *testHost) { c.ModelName = tc.model })
		var we *agent.ContextWindowError
		if !tc.refuse {
			if err != nil || model.Calls() != 1 {
				t.Errorf("%s: err %v after %d calls, want the request sent", tc.model, err, model.Calls())
			}
			continue
		}
		if !errors.As(err, &we) || model.Calls() != 0 {
			t.Fatalf("%s: err %v after %d calls, want a ContextWindowError before any call", tc.model, err, model.Calls())
		}
		if we.Window != 8192 || we.Estimated <= 8192 || !strings.Contains(err.Error(), "context.max_input_tokens") || !strings.Contains(err.Error(), "route /r") {
			t.Errorf("%s: error %q (%+v)", tc.model, err, we)
		}
	}
}
