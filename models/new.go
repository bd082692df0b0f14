package models

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// Environment variables read by New.
const (
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvOpenAIOrg        = "OPENAI_ORGANIZATION"
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	EnvOllamaHost       = "OLLAMA_HOST"
)

// Default server addresses used when the matching variable is unset.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com/v1"
	DefaultOllamaHost       = "http://127.0.0.1:11434"
)

// sharedHTTPClient is used by every provider model. It keeps connections
// alive, with enough idle connections per host for a loopback benchmark, and
// bounds connection set-up; a whole call is bounded by its context.
var sharedHTTPClient = &http.Client{
	Transport: wireTransport{next: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		ExpectContinueTimeout: time.Second,
	}},
	Timeout: 30 * time.Minute,
}

// New returns the model named by spec (see ParseSpec for the format). env
// looks up environment variables; pass os.Getenv in production. Only env is
// consulted: the process environment is never read behind its back.
//
// Errors name the model and the variable to set. Every error the returned
// model gives from GenerateContent is a *ModelError.
func New(spec string, env func(string) string) (llms.Model, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = func(string) string { return "" }
	}
	var inner llms.Model
	var baseURL string
	switch s.Provider {
	case ProviderOffline:
		return &checkedModel{inner: NewOffline(), spec: s}, nil
	case ProviderOpenAI:
		inner, baseURL, err = newOpenAI(s, env)
	case ProviderAnthropic:
		inner, baseURL, err = newAnthropic(s, env)
	case ProviderOllama:
		inner, baseURL, err = newOllama(s, env)
	}
	if err != nil {
		return nil, err
	}
	return &checkedModel{inner: inner, spec: s, baseURL: baseURL}, nil
}

func newOpenAI(s Spec, env func(string) string) (llms.Model, string, error) {
	key := strings.TrimSpace(env(EnvOpenAIKey))
	if key == "" {
		return nil, "", fmt.Errorf("model %q: %s is not set; export it, or set %s to an OpenAI-compatible server that needs no key (then any non-empty %s works), or use model %q",
			s, EnvOpenAIKey, EnvOpenAIBaseURL, EnvOpenAIKey, Offline)
	}
	base, err := baseURLFrom(s, env, EnvOpenAIBaseURL, DefaultOpenAIBaseURL)
	if err != nil {
		return nil, "", err
	}
	m, err := openai.New(
		openai.WithModel(s.Name),
		openai.WithToken(key),
		openai.WithBaseURL(base),
		openai.WithOrganization(env(EnvOpenAIOrg)),
		openai.WithHTTPClient(sharedHTTPClient),
	)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: %w", s, err)
	}
	return m, base, nil
}

func newAnthropic(s Spec, env func(string) string) (llms.Model, string, error) {
	key := strings.TrimSpace(env(EnvAnthropicKey))
	if key == "" {
		return nil, "", fmt.Errorf("model %q: %s is not set; export it (and %s for a proxy), or use model %q",
			s, EnvAnthropicKey, EnvAnthropicBaseURL, Offline)
	}
	base, err := baseURLFrom(s, env, EnvAnthropicBaseURL, DefaultAnthropicBaseURL)
	if err != nil {
		return nil, "", err
	}
	if !strings.HasSuffix(base, "/v1") {
		// Anthropic's own SDKs take the base without the version.
		base += "/v1"
	}
	m, err := anthropic.New(
		anthropic.WithModel(s.Name),
		anthropic.WithToken(key),
		anthropic.WithBaseURL(base),
		anthropic.WithHTTPClient(sharedHTTPClient),
	)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: %w", s, err)
	}
	return m, base, nil
}

// newOllama talks to Ollama through its OpenAI-compatible /v1 API: the native
// langchaingo Ollama client (v0.1.14) does not send tools, and Dawn's planning
// needs tool calls.
func newOllama(s Spec, env func(string) string) (llms.Model, string, error) {
	host, err := ollamaHost(s, env(EnvOllamaHost))
	if err != nil {
		return nil, "", err
	}
	base := host + "/v1"
	m, err := openai.New(
		openai.WithModel(s.Name),
		openai.WithToken("ollama"),
		openai.WithBaseURL(base),
		openai.WithHTTPClient(sharedHTTPClient),
	)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: %w", s, err)
	}
	return m, base, nil
}

// baseURLFrom reads an http(s) base URL from variable name, or returns def.
// The result has no trailing slash.
func baseURLFrom(s Spec, env func(string) string, name, def string) (string, error) {
	raw := strings.TrimSpace(env(name))
	if raw == "" {
		return def, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("model %q: %s=%q is not an http(s) URL; set it like %s", s, name, raw, def)
	}
	return strings.TrimRight(raw, "/"), nil
}

// ollamaHost accepts OLLAMA_HOST the way the ollama CLI does: "host",
// "host:port" or a full URL. It returns scheme://host:port without a slash.
func ollamaHost(s Spec, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return DefaultOllamaHost, nil
	}
	// Like the ollama CLI: no scheme means port 11434, an explicit scheme
	// means that scheme's usual port.
	withScheme, defaultPort := raw, "11434"
	switch {
	case !strings.Contains(raw, "://"):
		withScheme = "http://" + raw
	case strings.HasPrefix(raw, "https://"):
		defaultPort = "443"
	default:
		defaultPort = "80"
	}
	u, err := url.Parse(withScheme)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("model %q: %s=%q is not a host or http(s) URL; set it like %s", s, EnvOllamaHost, raw, DefaultOllamaHost)
	}
	hostname := u.Hostname()
	if hostname == "0.0.0.0" || hostname == "::" {
		// The server binds every address; a client dials loopback.
		hostname = "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	return u.Scheme + "://" + net.JoinHostPort(hostname, port) + strings.TrimRight(u.Path, "/"), nil
}
