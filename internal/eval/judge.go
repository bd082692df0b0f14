package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// judgeSystem tells the judge model how to score.
const judgeSystem = `You grade the final answer of an AI assistant against one criterion.
Score from 0 (the answer does not meet it at all) to 1 (it fully meets it).
Reply with only a JSON object: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.`

// judgeRequest is the user message the judge gets for one criterion.
func judgeRequest(c Case, o Observation, criterion string) string {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, m := range c.Setup.Messages {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	for _, m := range c.Input.Messages {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	fmt.Fprintf(&b, "\nFinal answer:\n%s\n\nCriterion: %s\n", o.Answer, criterion)
	return b.String()
}

// verdict is the judge's reply.
type verdict struct {
	Score  *float64 `json:"score"`
	Reason string   `json:"reason"`
}

// judge scores o's answer against each of j's criteria with model and
// returns the judge expectation's result: a pass when every score reaches
// the threshold.
func judge(ctx context.Context, model llms.Model, c Case, o Observation) Result {
	j := c.Expect.Judge
	res := Result{Expectation: ExpectJudge, Pass: true}
	if model == nil {
		res.Pass, res.Detail = false, "no judge model: set eval.judge_model in dawn.yaml (for example eval: {judge_model: openai:gpt-4o-mini})"
		return res
	}
	var notes []string
	for i, criterion := range j.Criteria {
		v, err := askJudge(ctx, model, judgeRequest(c, o, criterion))
		if err != nil {
			res.Pass = false
			notes = append(notes, fmt.Sprintf("criterion %d (%s): %v", i+1, criterion, err))
			continue
		}
		if *v.Score < j.Threshold {
			res.Pass = false
		}
		notes = append(notes, fmt.Sprintf("criterion %d scored %.2f (threshold %.2f): %s", i+1, *v.Score, j.Threshold, v.Reason))
	}
	res.Detail = strings.Join(notes, "; ")
	return res
}

func askJudge(ctx context.Context, model llms.Model, request string) (verdict, error) {
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, judgeSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, request),
	}, llms.WithTemperature(0))
	if err != nil {
		return verdict{}, fmt.Errorf("the judge model failed: %w", err)
	}
	if len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return verdict{}, fmt.Errorf("the judge model returned no answer")
	}
	return parseVerdict(resp.Choices[0].Content)
}

// parseVerdict reads the judge's {"score","reason"} object, which may sit
// in other text (a code fence).
func parseVerdict(text string) (verdict, error) {
	var v verdict
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start || json.Unmarshal([]byte(text[start:end+1]), &v) != nil || v.Score == nil {
		return v, fmt.Errorf(`the judge's reply is not {"score": 0..1, "reason": "..."}: %s`, clip(text))
	}
	if *v.Score < 0 || *v.Score > 1 {
		return v, fmt.Errorf("the judge's score %v is not from 0 to 1", *v.Score)
	}
	return v, nil
}
