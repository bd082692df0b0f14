// Package models turns a model name such as "openai:gpt-4o-mini" into a
// langchaingo llms.Model, and holds the built-in "offline" model that needs no
// network. The offline model learns the texts capabilities write to it
// (capabilities.OfflineScript) and the calls of their tools
// (capabilities.OfflineScripter) from the app's markers, which the runner
// hands it with each run's context (WithMarkers); it knows no capability's
// tools itself.
//
// # Names
//
// A model is named provider:model. The provider is one of:
//
//   - openai:<model> uses OPENAI_API_KEY (required) and OPENAI_BASE_URL
//     (optional, for any OpenAI-compatible server; default
//     https://api.openai.com/v1).
//   - anthropic:<model> uses ANTHROPIC_API_KEY (required) and
//     ANTHROPIC_BASE_URL (optional; "/v1" is added when it is missing).
//   - ollama:<model> needs no key and talks to OLLAMA_HOST (default
//     http://127.0.0.1:11434) through Ollama's OpenAI-compatible API, which
//     supports tool calls.
//   - gemini:<model> uses GEMINI_API_KEY (or GOOGLE_API_KEY) and
//     GEMINI_BASE_URL (optional; default
//     https://generativelanguage.googleapis.com/v1beta). It speaks Gemini's
//     REST API directly and streams with streamGenerateContent?alt=sse.
//   - openai-compatible:<model> talks to any OpenAI-compatible server (vLLM,
//     LM Studio, Ollama) at OPENAI_COMPATIBLE_BASE_URL (required), with
//     OPENAI_COMPATIBLE_API_KEY when the server wants one.
//   - offline (or offline:anything) is the built-in deterministic model.
//   - script:FILE answers from a YAML file of scripted turns (see
//     ParseScript), matched by position or by the latest user or tool
//     message, past the per-turn state block (StateBlockHeading).
//
// # Fallbacks and retries
//
// A model string may be a list joined by commas, tried in order when a
// model fails ("openai:gpt-4o-mini,anthropic:claude-3-5-haiku-latest"); see
// ParseSpecList. Every provider model retries 429 and 5xx answers within
// DAWN_MODEL_RETRIES and DAWN_MODEL_RETRY_MAX_WAIT, honouring Retry-After.
// Each failed try is logged and reported to the observer set with
// WithAttemptObserver.
//
// The model part may itself hold colons: "ollama:llama3.2:1b" is model
// "llama3.2:1b" of provider ollama.
//
// # The OpenAI wire
//
// openai, openai-compatible and ollama models are langchaingo's openai
// client with a thin client of Dawn's in front (openAIWire): the calls the
// agent makes (text and tool-call messages, tools, a temperature or token
// limit, streamed or not) are encoded once, with each tool's schema
// cached, and sent as the bytes langchaingo would send after Dawn's edits;
// the answer is read as that client reads it. Any other call goes to
// langchaingo.
//
// # Choosing a model
//
// New builds one model from one name. Which name a route uses is decided by
// the caller, in this order: the route's front matter, then dawn.yaml, then the
// DAWN_MODEL environment variable, and finally Offline, so a fresh checkout
// runs with no key at all.
//
// # Errors
//
// Every error a model from New returns from GenerateContent is a *ModelError.
// It names the model and, when the server cannot be reached or refuses the
// key, the address and the environment variable to change.
//
// # Offline
//
// The offline model makes the calls the route's capabilities script for it
// (the planning capability works through the route's plan one step at a
// time), then calls each of the route's app tools once, in name order, and
// then answers briefly, quoting what the tools returned. It calls a "task"
// subagent once first when one is offered. Which tools are the app's, not a
// capability's, the agent loop tells it with each call's context
// (WithAppTools); it calls no other tool.
package models
