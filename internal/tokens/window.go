package tokens

import (
	"strings"
)

// windows are the context windows (input tokens a request may hold) of
// common OpenAI and Anthropic models, by model-name prefix; the longest
// matching prefix wins.
var windows = []struct {
	provider, prefix string
	tokens           int
}{
	{"openai", "gpt-3.5-turbo", 16_385},
	{"openai", "gpt-4", 8_192},
	{"openai", "gpt-4-turbo", 128_000},
	{"openai", "gpt-4o", 128_000},
	{"openai", "chatgpt-4o", 128_000},
	{"openai", "gpt-4.1", 1_047_576},
	{"openai", "gpt-4.5", 128_000},
	{"openai", "gpt-5", 272_000},
	{"openai", "o1", 200_000},
	{"openai", "o1-mini", 128_000},
	{"openai", "o3", 200_000},
	{"openai", "o4-mini", 200_000},
	{"anthropic", "claude-", 200_000},
}

// Window returns the context window of model (a "provider:model" spec) in
// input tokens; ok is false for a model this package does not know, whose
// requests are then not checked. For a fallback list ("a,b") it is the
// largest window of the list, and ok only when every model is known.
func Window(model string) (tokens int, ok bool) {
	if strings.Contains(model, ",") {
		for spec := range strings.SplitSeq(model, ",") {
			w, known := Window(strings.TrimSpace(spec))
			if !known {
				return 0, false
			}
			tokens = max(tokens, w)
		}
		return tokens, true
	}
	provider, name, _ := strings.Cut(model, ":")
	best := -1
	for _, w := range windows {
		if w.provider == provider && strings.HasPrefix(name, w.prefix) && len(w.prefix) > best {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens, best >= 0
}
