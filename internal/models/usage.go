package models

import "github.com/tmc/langchaingo/llms"

// Usage reads the token counts and finish reasons of a response; a count
// the client did not report is -1. langchaingo's OpenAI and Ollama clients
// report PromptTokens and CompletionTokens, Anthropic's InputTokens and
// OutputTokens, in the GenerationInfo of each choice (the same usage on
// every choice).
func Usage(resp *llms.ContentResponse) (in, out int64, reasons []string) {
	in, out = -1, -1
	if resp == nil {
		return in, out, nil
	}
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.StopReason != "" {
			reasons = append(reasons, c.StopReason)
		}
		if in < 0 {
			in = count(c.GenerationInfo, "PromptTokens", "InputTokens")
		}
		if out < 0 {
			out = count(c.GenerationInfo, "CompletionTokens", "OutputTokens")
		}
	}
	return in, out, reasons
}

func count(info map[string]any, keys ...string) int64 {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return int64(v)
		case int32:
			return int64(v)
		case int64:
			return v
		case float64:
			return int64(v)
		}
	}
	return -1
}
