package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// cutOffModel cancels the run's context mid-call and returns the partial
// text with a nil error, as langchaingo's OpenAI streaming client does.
type cutOffModel struct{ cancel context.CancelFunc }

func (m cutOffModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.cancel()
	<-ctx.Done()
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Half an "}}}, nil
}

func (m cutOffModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// TestPartialAnswerOfCancelledCallIsNoAnswer: the partial text of a model
// call cut off by its context is not taken as the final answer, by the
// agent loop or by Complete.
func TestPartialAnswerOfCancelledCallIsNoAnswer(t *testing.T) {
	route := prepare(t, map[string]string{"r/agent.md": "You answer."})
	input := []thread.Message{{Role: thread.RoleUser, Content: "hi"}}

	ctx, cancel := context.WithCancel(context.Background())
	cfg := agent.Config{Route: route, Model: cutOffModel{cancel}, Stream: true, Host: &testHost{}}
	res, err := agent.Run(ctx, cfg, nil, nil, input)
	if !errors.Is(err, context.Canceled) || res.Answer != "" {
		t.Fatalf("Run = %q, %v; want no answer and context.Canceled", res.Answer, err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	text, err := agent.Complete(ctx, cutOffModel{cancel}, "m", "p", input)
	if !errors.Is(err, context.Canceled) || text != "" {
		t.Fatalf("Complete = %q, %v; want no text and context.Canceled", text, err)
	}
}
