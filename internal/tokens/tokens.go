// Package tokens counts and estimates the tokens of model requests,
// offline: OpenAI models with their tiktoken encodings from BPE tables
// embedded in the binary, so no count ever needs the network, other models
// with a documented estimate. It also knows the context windows of common
// models. It imports nothing of Dawn's layers but the thread data.
package tokens

// Encoding is the encoding Count uses.
const Encoding = "o200k_base"

// Count returns the number of o200k_base tokens of text (gpt-4o,
// gpt-4o-mini and later). It panics only if the embedded tables cannot be
// read, which a build that compiles rules out.
func Count(text string) int { return countWith(Encoding, text) }
