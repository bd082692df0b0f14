package models

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// ErrorKind says why a model call failed.
type ErrorKind string

// Kinds of ModelError.
const (
	KindUnreachable ErrorKind = "unreachable" // no connection to the server
	KindTimeout     ErrorKind = "timeout"     // the network gave up waiting
	KindAuth        ErrorKind = "auth"        // the server refused the key (401 or 403)
	KindCanceled    ErrorKind = "canceled"    // the caller's context ended
	KindOther       ErrorKind = "other"       // anything else, including other HTTP errors
)

// ModelError is the error every model from New returns from GenerateContent.
// Its message names the model and, for a server that cannot be reached or
// that refuses the key, the address and the environment variable to change.
type ModelError struct {
	Spec     string    // the model name, for example "openai:gpt-4o-mini"
	Provider string    // openai, anthropic, gemini, ollama, openai-compatible or offline
	BaseURL  string    // the server address used; empty for offline
	Kind     ErrorKind // why the call failed
	Status   int       // the HTTP status when the server answered with one, else 0
	Err      error     // the underlying error
}

// Error describes the failure and what to do about it.
func (e *ModelError) Error() string {
	switch e.Kind {
	case KindUnreachable:
		return fmt.Sprintf("model %q: could not reach the server at %s; %s (%v)", e.Spec, e.BaseURL, e.unreachableHint(), e.Err)
	case KindTimeout:
		return fmt.Sprintf("model %q: the server at %s did not answer in time; check that it is up, or set %s to another address (%v)", e.Spec, e.BaseURL, urlVariable(e.Provider), e.Err)
	case KindAuth:
		if key := keyVariable(e.Provider); key != "" {
			return fmt.Sprintf("model %q: the server at %s refused the API key (HTTP %d); check %s (%v)", e.Spec, e.BaseURL, e.Status, key, e.Err)
		}
		return fmt.Sprintf("model %q: the server at %s refused the request (HTTP %d) (%v)", e.Spec, e.BaseURL, e.Status, e.Err)
	case KindCanceled:
		return fmt.Sprintf("model %q: call canceled: %v", e.Spec, e.Err)
	default:
		return fmt.Sprintf("model %q: %v", e.Spec, e.Err)
	}
}

// Unwrap returns the underlying error.
func (e *ModelError) Unwrap() error { return e.Err }

func (e *ModelError) unreachableHint() string {
	if e.Provider == ProviderOllama {
		return fmt.Sprintf("start Ollama (ollama serve), or set %s to its address", EnvOllamaHost)
	}
	return fmt.Sprintf("start the server or check the network, or set %s to the right address", urlVariable(e.Provider))
}

func urlVariable(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return EnvOpenAIBaseURL
	case ProviderAnthropic:
		return EnvAnthropicBaseURL
	case ProviderOllama:
		return EnvOllamaHost
	case ProviderGemini:
		return EnvGeminiBaseURL
	case ProviderCompatible:
		return EnvCompatibleBaseURL
	}
	return ""
}

func keyVariable(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return EnvOpenAIKey
	case ProviderAnthropic:
		return EnvAnthropicKey
	case ProviderGemini:
		return EnvGeminiKey
	case ProviderCompatible:
		return EnvCompatibleKey
	}
	return ""
}

// statusPattern finds the HTTP status in the providers' error text
// ("API returned unexpected status code: 401: ...").
var statusPattern = regexp.MustCompile(`status code: (\d{3})`)

// unreachableTexts are fragments of connection failures. The openai client
// hides the net error behind its own text, so types alone are not enough.
var unreachableTexts = []string{
	"connection refused",
	"no such host",
	"failed to reach api server",
	"network is unreachable",
	"connection reset",
	"dial tcp",
}

// classify turns a provider error into a *ModelError.
func classify(ctx context.Context, spec Spec, baseURL string, err error) *ModelError {
	e := &ModelError{Spec: spec.String(), Provider: spec.Provider, BaseURL: baseURL, Kind: KindOther, Err: err}
	var already *ModelError
	if errors.As(err, &already) {
		e.Err = already.Err
		e.Kind, e.Status = already.Kind, already.Status
		return e
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		e.Kind = KindCanceled
		if !errors.Is(err, ctxErr) {
			e.Err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return e
	}
	text := strings.ToLower(err.Error())
	if m := statusPattern.FindStringSubmatch(text); m != nil {
		e.Status, _ = strconv.Atoi(m[1])
	}
	var llmErr *llms.Error
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case e.Status == 401 || e.Status == 403:
		e.Kind = KindAuth
	case errors.As(err, &llmErr) && llmErr.Code == llms.ErrCodeAuthentication:
		e.Kind = KindAuth
	case errors.As(err, &netErr) && netErr.Timeout(), strings.Contains(text, "request timeout: network"):
		e.Kind = KindTimeout
	case errors.As(err, &opErr), errors.As(err, &dnsErr), containsAny(text, unreachableTexts):
		e.Kind = KindUnreachable
	}
	return e
}

func containsAny(text string, fragments []string) bool {
	for _, f := range fragments {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}
