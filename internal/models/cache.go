package models

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/tmc/langchaingo/llms"
)

// Provider prompt caches bill a request's leading tokens that an earlier
// request already sent at a fraction of the price. The agent lays each
// request out so that it begins with the previous one (the live state goes
// in a system message after the conversation); the code here asks each
// provider to cache that prefix:
//
//   - OpenAI caches prefixes by itself; prompt_cache_key (the thread) routes
//     a thread's requests to the same cache. langchaingo has no option for
//     it, so wireTransport adds it to the request body.
//   - Anthropic caches up to the cache_control breakpoints a request sets.
//     langchaingo sets them only on user text, so wireTransport sets two on
//     the body: at the end of the system prompt and at the end of the
//     conversation, before the state block. Anthropic joins every system
//     message into the system prompt, so the late state block is sent as a
//     user message instead.
//   - Gemini caches prefixes by itself (implicit caching). Its request has
//     one system instruction, which every system message joins, the state
//     block included: there the state still changes the request's start.

// promptCacheKey marks a call's context with its prompt-cache key.
type promptCacheKey struct{}

// WithPromptCacheKey returns ctx whose model calls carry key as their
// provider prompt-cache key: the thread id, so that a thread's requests
// reach the same cache. Only OpenAI takes a key. A key longer than
// maxCacheKey is sent as a hash of it.
func WithPromptCacheKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	if len(key) > maxCacheKey {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:24])
	}
	return context.WithValue(ctx, promptCacheKey{}, key)
}

// maxCacheKey bounds the prompt-cache key sent as it is; thread ids are
// UUIDs, well under it.
const maxCacheKey = 64

// cacheEdit is how wireTransport edits one call's body for the provider's
// prompt cache: the OpenAI key to add, or the Anthropic breakpoints to set.
type cacheEdit struct {
	openAIKey string
	// anthropic sets breakpoints; stateMessages is how many messages at
	// the end of the conversation are the state block, which the
	// conversation's breakpoint goes before.
	anthropic     bool
	stateMessages int
}

type cacheEditKey struct{}

// withCacheEdit marks the context of a call to provider whose messages
// are messages (after lateSystemAsUser) with its cache edit.
func withCacheEdit(ctx context.Context, provider string, stateMessages int) context.Context {
	switch provider {
	case ProviderOpenAI:
		if key, _ := ctx.Value(promptCacheKey{}).(string); key != "" {
			return context.WithValue(ctx, cacheEditKey{}, cacheEdit{openAIKey: key})
		}
	case ProviderAnthropic:
		return context.WithValue(ctx, cacheEditKey{}, cacheEdit{anthropic: true, stateMessages: stateMessages})
	}
	return ctx
}

// lateSystemAsUser turns the system messages that follow the conversation's
// first other message (the agent's per-turn state block) into user
// messages for Anthropic, which would otherwise join them into the system
// prompt and so change the request's first tokens every turn. It returns
// the messages and how many of them at the end were turned. messages is
// not changed.
func lateSystemAsUser(provider string, messages []llms.MessageContent) ([]llms.MessageContent, int) {
	if provider != ProviderAnthropic {
		return messages, 0
	}
	first := -1
	for i, mc := range messages {
		if mc.Role != llms.ChatMessageTypeSystem {
			first = i
			break
		}
	}
	if first < 0 {
		return messages, 0
	}
	var out []llms.MessageContent
	turned := 0
	for i := first; i < len(messages); i++ {
		if messages[i].Role != llms.ChatMessageTypeSystem {
			turned = 0
			continue
		}
		if out == nil {
			out = append([]llms.MessageContent(nil), messages...)
		}
		out[i] = llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: messages[i].Parts}
		turned++
	}
	if out == nil {
		return messages, 0
	}
	return out, turned
}

// apply returns body with the edit's cache fields.
func (edit cacheEdit) apply(body []byte) []byte {
	if edit.openAIKey != "" {
		return withMember(body, "prompt_cache_key", edit.openAIKey)
	}
	if edit.anthropic {
		return withBreakpoints(body, edit.stateMessages)
	}
	return body
}

// withMember returns the JSON object body with the string member key
// first, the rest byte for byte; body as it is when it is not an object or
// names key anywhere (a member the caller set wins).
func withMember(body []byte, key, value string) []byte {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return body
	}
	if bytes.Contains(body, []byte(`"`+key+`"`)) {
		return body
	}
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(value)
	member := append(append(append(k, ':'), v...), ',')
	rest := bytes.TrimLeft(trimmed[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] == '}' {
		member = member[:len(member)-1]
	}
	out := make([]byte, 0, len(body)+len(member))
	out = append(out, '{')
	out = append(out, member...)
	return append(out, trimmed[1:]...)
}

// ephemeral is Anthropic's cache breakpoint.
var ephemeral = json.RawMessage(`{"type":"ephemeral"}`)

// withBreakpoints returns an Anthropic Messages body with cache
// breakpoints at the end of its system prompt and on the last content
// block of the conversation before its last stateMessages messages; body
// as it is when it cannot be read as such.
func withBreakpoints(body []byte, stateMessages int) []byte {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	var system string
	if json.Unmarshal(req["system"], &system) == nil && system != "" {
		req["system"], _ = json.Marshal([]map[string]any{{"type": "text", "text": system, "cache_control": ephemeral}})
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(req["messages"], &msgs) == nil {
		if i := len(msgs) - 1 - stateMessages; i >= 0 && markLastBlock(msgs[i]) {
			req["messages"], _ = json.Marshal(msgs)
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

// markLastBlock sets a cache breakpoint on the last content block of an
// Anthropic message, reporting whether it could.
func markLastBlock(msg map[string]json.RawMessage) bool {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(msg["content"], &blocks) != nil || len(blocks) == 0 {
		return false
	}
	blocks[len(blocks)-1]["cache_control"] = ephemeral
	content, err := json.Marshal(blocks)
	if err != nil {
		return false
	}
	msg["content"] = content
	return true
}

// CachedInputTokens reads the input tokens a response says the provider
// read from its prompt cache: OpenAI's usage.prompt_tokens_details
// .cached_tokens, Anthropic's cache_read_input_tokens, Gemini's
// usageMetadata.cachedContentTokenCount. It is -1 when the client reported none.
func CachedInputTokens(resp *llms.ContentResponse) int64 {
	if resp == nil {
		return -1
	}
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if n := count(c.GenerationInfo, "PromptCachedTokens", "CacheReadInputTokens"); n >= 0 {
			return n
		}
		if usage, ok := c.GenerationInfo["usage"].(map[string]any); ok {
			if n := count(usage, "cachedContentTokenCount"); n >= 0 {
				return n
			}
		}
	}
	return -1
}
