package agent

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// Complete makes one model call without tools, for a harness phase such as
// plan-first's planner: system is the system prompt and msgs the
// conversation, opts the call options (see Config.SamplingOptions). A
// failure is a *ModelError naming modelName.
func Complete(ctx context.Context, model llms.Model, modelName, system string, msgs []thread.Message, opts ...llms.CallOption) (string, error) {
	resp, err := model.GenerateContent(ctx, toLLM(system, msgs), opts...)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &ModelError{Model: modelName, Err: err}
	}
	if err := ctx.Err(); err != nil { // partial text from a call cut off
		return "", err
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", &ModelError{Model: modelName, Err: errors.New("the model returned no choices")}
	}
	return resp.Choices[0].Content, nil
}
