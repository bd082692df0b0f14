// Package openai is the OpenAI-compatible wire of Dawn's HTTP API:
// POST /v1/chat/completions runs a route as if it were a model, and
// GET /v1/models lists the routes that can be named so.
//
// It owns the translation between OpenAI's chat-completion shapes and a
// run: the request's messages become the run's input, the run's answer
// becomes a chat.completion (or chat.completion.chunk server-sent events),
// and errors take OpenAI's error shape. It mounts on a wire.Host and
// reaches runs only through it; it imports no capability.
package openai
