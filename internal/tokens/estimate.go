package tokens

import (
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/dawn-go/dawn/thread"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tmc/langchaingo/llms"
)

// Overheads of OpenAI's chat format, as its token-counting recipe gives
// them: each message costs its text plus messageOverhead, and the reply is
// primed with replyOverhead.
const (
	messageOverhead = 3
	replyOverhead   = 3
)

// bytesPerToken is the estimate for models with no tokenizer in Go: one
// token per four bytes of text, rounded up, plus the chat overheads.
const bytesPerToken = 4

// EstimateMessages returns the estimated input tokens of one model request
// to model (a "provider:model" spec such as "openai:gpt-4o-mini"): the
// system prompt, the conversation msgs and the tool definitions. OpenAI
// models are counted with their own tiktoken encoding (o200k_base, or
// cl100k_base for gpt-4 and gpt-3.5), offline; other models are estimated
// at one token per four bytes. Either way the count follows OpenAI's
// recipe for chat overheads, so it is close, not exact: providers add a
// few tokens of their own framing, and count tool schemas their own way.
func EstimateMessages(model, system string, msgs []thread.Message, tools []llms.Tool) int {
	return EstimateConversation(model, system, msgs) + EstimateTools(model, tools)
}

// EstimateConversation is EstimateMessages without the tool definitions,
// for a caller that estimates those once (EstimateTools) and adds them.
func EstimateConversation(model, system string, msgs []thread.Message) int {
	return conversation(counterFor(model), system, msgs)
}

// BoundConversation returns a number of tokens that EstimateConversation
// never exceeds, for any model, without encoding: every token of a
// byte-level BPE encoding (and every four-byte estimate) stands for at
// least one byte of text, so a text has at most as many tokens as bytes.
// A request whose bound fits a window fits it without being counted.
func BoundConversation(system string, msgs []thread.Message) int {
	// conversation(byteCount, ...) counts the same, but converts each call's
	// input to a string to count it.
	n := replyOverhead
	if system != "" {
		n += messageOverhead + len(system)
	}
	for _, m := range msgs {
		n += messageOverhead + len(m.Content)
		if m.Name != "" {
			n += 1 + len(m.Name)
		}
		for _, c := range m.ToolCalls {
			n += messageOverhead + len(c.Name) + len(c.Input)
		}
	}
	return n
}

// BoundTools is BoundConversation for tool definitions: a number of
// tokens EstimateTools never exceeds.
//
// It is worked out per run, so a schema given as JSON (json.RawMessage, as
// every capability's is) is not encoded again: its encoding is never longer
// than the schema plus what HTML escaping adds.
func BoundTools(tools []llms.Tool) int {
	n := 0
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		raw, isRaw := t.Function.Parameters.(json.RawMessage)
		if !isRaw {
			n += toolTokens(func(text string) int { return len(text) }, []llms.Tool{t})
			continue
		}
		n += messageOverhead + len(t.Function.Name) + len(t.Function.Description) + escapedBound(raw)
	}
	return n
}

// escapedBound is a length json.Marshal's encoding of raw never exceeds:
// compacting only drops bytes, and escaping turns each <, > and & into six
// bytes and each U+2028 and U+2029 (three bytes) into six.
func escapedBound(raw json.RawMessage) int {
	n := len(raw)
	for _, c := range raw {
		switch c {
		case '<', '>', '&':
			n += 5
		case 0xe2: // the first byte of U+2028 and U+2029
			n += 3
		}
	}
	return n
}

// conversation counts a request's system prompt and messages with count,
// adding the chat overheads.
func conversation(count func(string) int, system string, msgs []thread.Message) int {
	n := replyOverhead
	if system != "" {
		n += messageOverhead + count(system)
	}
	for _, m := range msgs {
		n += messageOverhead + count(m.Content)
		if m.Name != "" {
			n += 1 + count(m.Name)
		}
		for _, c := range m.ToolCalls {
			n += messageOverhead + count(c.Name) + count(string(c.Input))
		}
	}
	return n
}

// EstimateText returns the estimated tokens of text for model, counted as
// EstimateMessages counts a message's text.
func EstimateText(model, text string) int { return counterFor(model)(text) }

// EstimateTools returns the estimated tokens the tool definitions add to a
// request to model: each definition's JSON, counted as text.
func EstimateTools(model string, tools []llms.Tool) int {
	return toolTokens(counterFor(model), tools)
}

// toolTokens counts tool definitions with count: each one's name,
// description and parameters' JSON, with the chat overhead.
func toolTokens(count func(string) int, tools []llms.Tool) int {
	n := 0
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		n += messageOverhead + count(t.Function.Name) + count(t.Function.Description)
		if t.Function.Parameters != nil {
			if b, err := json.Marshal(t.Function.Parameters); err == nil {
				n += count(string(b))
			}
		}
	}
	return n
}

// counterFor returns how text is counted for model.
func counterFor(model string) func(string) int {
	provider, name, _ := strings.Cut(model, ":")
	if provider != "openai" {
		return estimateBytes
	}
	if encoding := openAIEncoding(name); encoding != "" {
		return func(text string) int { return countWith(encoding, text) }
	}
	return estimateBytes
}

// openAIEncoding is the tiktoken encoding of an OpenAI model, or "" for a
// name this package does not know.
func openAIEncoding(name string) string {
	switch {
	case strings.HasPrefix(name, "gpt-4o"), strings.HasPrefix(name, "gpt-4.1"), strings.HasPrefix(name, "gpt-4.5"),
		strings.HasPrefix(name, "gpt-5"), strings.HasPrefix(name, "o1"), strings.HasPrefix(name, "o3"),
		strings.HasPrefix(name, "o4"), strings.HasPrefix(name, "chatgpt-4o"):
		return "o200k_base"
	case strings.HasPrefix(name, "gpt-4"), strings.HasPrefix(name, "gpt-3.5"):
		return "cl100k_base"
	}
	return ""
}

func estimateBytes(text string) int { return (len(text) + bytesPerToken - 1) / bytesPerToken }

// encodings holds each tiktoken encoding once loaded; loading one reads
// its embedded table (a few MB) and is done on first use only.
var encodings sync.Map // name -> *loadedEncoding

type loadedEncoding struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

var setLoader sync.Once

// countWith returns the tokens of text in encoding. It panics only if the
// embedded tables cannot be read, which a build that compiles rules out.
func countWith(encoding, text string) int {
	if text == "" {
		return 0
	}
	v, _ := encodings.LoadOrStore(encoding, &loadedEncoding{})
	le := v.(*loadedEncoding)
	le.once.Do(func() {
		setLoader.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
		le.enc, le.err = tiktoken.GetEncoding(encoding)
	})
	if le.err != nil {
		panic("tokens: " + le.err.Error())
	}
	if len(text) < memoMin {
		return len(le.enc.EncodeOrdinary(text))
	}
	key := memoKey{encoding, hashOf(text), len(text)}
	if n, ok := memo.get(key); ok {
		return n
	}
	n := len(le.enc.EncodeOrdinary(text))
	memo.put(key, n)
	return n
}

// A thread's messages are counted again before every model call, so the
// counts of long texts are kept: only a turn's new messages are encoded.
const (
	memoMin  = 256  // shorter texts are encoded every time
	memoSize = 8192 // entries kept before the memo starts over
)

var memoSeed = maphash.MakeSeed()

func hashOf(text string) uint64 { return maphash.String(memoSeed, text) }

var memo = &counts{m: map[memoKey]int{}}

// memoKey names a text by its encoding, hash and length.
type memoKey struct {
	encoding string
	hash     uint64
	size     int
}

// counts is a bounded memo of token counts, safe for concurrent use.
type counts struct {
	mu sync.Mutex
	m  map[memoKey]int
}

func (c *counts) get(k memoKey) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[k]
	return n, ok
}

func (c *counts) put(k memoKey, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= memoSize {
		clear(c.m)
	}
	c.m[k] = n
}
