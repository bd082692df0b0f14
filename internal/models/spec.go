package models

import (
	"fmt"
	"slices"
	"strings"
)

// Offline is the name of the built-in model that needs no network.
const Offline = "offline"

// Providers known to New, in the order error messages list them.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderOllama    = "ollama"
	ProviderGemini    = "gemini"
	// ProviderCompatible is any server that speaks OpenAI's chat API at a
	// base URL of its own: vLLM, LM Studio, Ollama, llama.cpp's server.
	ProviderCompatible = "openai-compatible"
	ProviderOffline    = Offline
)

var knownProviders = []string{ProviderOpenAI, ProviderAnthropic, ProviderGemini, ProviderOllama, ProviderCompatible, ProviderOffline, ProviderScript}

// Spec is a parsed model name: Provider "openai" and Name "gpt-4o-mini" for
// "openai:gpt-4o-mini". The offline model has Provider "offline" and an
// optional Name that is ignored.
type Spec struct {
	Provider, Name string
}

// String returns the name in provider:model form, or "offline".
func (s Spec) String() string {
	if s.Provider == ProviderOffline && s.Name == "" {
		return Offline
	}
	return s.Provider + ":" + s.Name
}

// ParseSpec parses a provider:model name. The provider is matched without
// regard to case; the model part is kept as written and may contain colons.
// "offline" alone names the offline model.
func ParseSpec(s string) (Spec, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Spec{}, fmt.Errorf("model name is empty; use provider:model, for example openai:gpt-4o-mini, or %q", Offline)
	}
	provider, name, hasColon := strings.Cut(text, ":")
	provider = strings.ToLower(strings.TrimSpace(provider))
	name = strings.TrimSpace(name)
	if !slices.Contains(knownProviders, provider) {
		return Spec{}, fmt.Errorf("model %q: unknown provider %q; use one of %s", s, provider, strings.Join(knownProviders, ", "))
	}
	if provider == ProviderOffline {
		return Spec{Provider: ProviderOffline, Name: name}, nil
	}
	if name == "" {
		why := "has no model name"
		if !hasColon {
			why = "needs a model name after the provider"
		}
		return Spec{}, fmt.Errorf("model %q %s; write %s:<model>, for example %s", s, why, provider, exampleSpec(provider))
	}
	return Spec{Provider: provider, Name: name}, nil
}

func exampleSpec(provider string) string {
	switch provider {
	case ProviderAnthropic:
		return "anthropic:claude-3-5-haiku-latest"
	case ProviderOllama:
		return "ollama:llama3.2"
	case ProviderGemini:
		return "gemini:gemini-2.0-flash"
	case ProviderCompatible:
		return "openai-compatible:Qwen/Qwen2.5-7B-Instruct"
	case ProviderScript:
		return "script:evals/refund.script.yaml"
	default:
		return "openai:gpt-4o-mini"
	}
}

// KeyEnv returns the environment variable that holds the key of the
// models spec names (a list included), each once, in order: the
// variables a deployment must carry for them. Models that need none
// (offline, script, ollama) add nothing; an unreadable spec gives nil.
func KeyEnv(spec string) []string {
	specs, err := ParseSpecList(spec)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range specs {
		name := ""
		switch s.Provider {
		case ProviderOpenAI:
			name = EnvOpenAIKey
		case ProviderAnthropic:
			name = EnvAnthropicKey
		case ProviderGemini:
			name = EnvGeminiKey
		case ProviderCompatible:
			name = EnvCompatibleBaseURL
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
