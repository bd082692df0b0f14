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
	EnvGeminiKey        = "GEMINI_API_KEY"
	// EnvGoogleKey is read when EnvGeminiKey is unset, as Google's SDKs do.
	EnvGoogleKey     = "GOOGLE_API_KEY"
	EnvGeminiBaseURL = "GEMINI_BASE_URL"
	// EnvCompatibleBaseURL is required by openai-compatible models; the key
	// is optional, for servers started with one (vllm serve --api-key).
	EnvCompatibleBaseURL = "OPENAI_COMPATIBLE_BASE_URL"
	EnvCompatibleKey     = "OPENAI_COMPATIBLE_API_KEY"
)

// Default server addresses used when the matching variable is unset.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com/v1"
	DefaultOllamaHost       = "http://127.0.0.1:11434"
	DefaultGeminiBaseURL    = "https://generativelanguage.googleapis.com/v1beta"
)

// sharedHTTPClient is used by every provider model. It keeps connections
// alive, with enough idle connections per host for a loopback benchmark, and
// bounds connection set-up; a whole call is bounded by callTimeout and its
// context.
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
}

// callTimeout bounds a whole model call, the answer's body included. It is
// a deadline on the request's context, not an http.Client Timeout: that
// one starts two goroutines per request to enforce itself, and a server
// holds thousands of calls waiting on slow models.
const callTimeout = 30 * time.Minute

// New returns the model named by spec (see ParseSpec for the format), or a
// model that tries a fallback list of them in order (see ParseSpecList).
// env looks up environment variables; pass os.Getenv in production. Only
// env is consulted: the process environment is never read behind its back.
//
// Each provider model retries a call that the server answers with 429 or a
// 5xx, within the RetryPolicy read from EnvRetries and EnvRetryMaxWait.
//
// Errors name the model and the variable to set. Every error the returned
// model gives from GenerateContent is a *ModelError.
func New(spec string, env func(string) string) (llms.Model, error) {
	specs, err := ParseSpecList(spec)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = func(string) string { return "" }
	}
	policy, err := retryPolicyFrom(spec, env)
	if err != nil {
		return nil, err
	}
	if len(specs) == 1 {
		return newOne(specs[0], env, policy)
	}
	f := &fallbackModel{}
	for _, s := range specs {
		m, err := newOne(s, env, policy)
		if err != nil {
			return nil, fmt.Errorf("model list %q: %w", spec, err)
		}
		f.models = append(f.models, m)
		f.specs = append(f.specs, s.String())
	}
	return f, nil
}

// newOne builds one provider's model.
func newOne(s Spec, env func(string) string, policy RetryPolicy) (llms.Model, error) {
	var inner llms.Model
	var baseURL string
	var err error
	client := &http.Client{
		Transport: deadlineTransport{next: &retryTransport{base: sharedHTTPClient.Transport, spec: s.String(), policy: policy}, timeout: callTimeout},
	}
	switch s.Provider {
	case ProviderOffline:
		return &checkedModel{inner: NewOffline(), spec: s}, nil
	case ProviderScript:
		m, err := newScriptModel(s.Name)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", s, err)
		}
		return &checkedModel{inner: m, spec: s}, nil
	case ProviderOpenAI:
		inner, baseURL, err = newOpenAI(s, env, client)
	case ProviderAnthropic:
		inner, baseURL, err = newAnthropic(s, env, client)
	case ProviderOllama:
		inner, baseURL, err = newOllama(s, env, client)
	case ProviderGemini:
		inner, baseURL, err = newGemini(s, env, client)
	case ProviderCompatible:
		inner, baseURL, err = newCompatible(s, env, client)
	}
	if err != nil {
		return nil, err
	}
	return &checkedModel{inner: inner, spec: s, baseURL: baseURL}, nil
}

func newOpenAI(s Spec, env func(string) string, client *http.Client) (llms.Model, string, error) {
	key := strings.TrimSpace(env(EnvOpenAIKey))
	if key == "" {
		return nil, "", fmt.Errorf("model %q: %s is not set; export it, or set %s to an OpenAI-compatible server that needs no key (then any non-empty %s works), or use model %q",
			s, EnvOpenAIKey, EnvOpenAIBaseURL, EnvOpenAIKey, Offline)
	}
	base, err := baseURLFrom(s, env, EnvOpenAIBaseURL, DefaultOpenAIBaseURL)
	if err != nil {
		return nil, "", err
	}
	m, err := newWireModel(s, client, base, key, env(EnvOpenAIOrg), true)
	if err != nil {
		return nil, "", err
	}
	return m, base, nil
}

func newAnthropic(s Spec, env func(string) string, client *http.Client) (llms.Model, string, error) {
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
		anthropic.WithHTTPClient(client),
	)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: %w", s, err)
	}
	return m, base, nil
}

func newGemini(s Spec, env func(string) string, client *http.Client) (llms.Model, string, error) {
	key := strings.TrimSpace(env(EnvGeminiKey))
	if key == "" {
		key = strings.TrimSpace(env(EnvGoogleKey))
	}
	if key == "" {
		return nil, "", fmt.Errorf("model %q: %s is not set; export it (or %s), and %s for a proxy, or use model %q",
			s, EnvGeminiKey, EnvGoogleKey, EnvGeminiBaseURL, Offline)
	}
	base, err := baseURLFrom(s, env, EnvGeminiBaseURL, DefaultGeminiBaseURL)
	if err != nil {
		return nil, "", err
	}
	return &geminiModel{client: client, baseURL: base, key: key, model: s.Name}, base, nil
}

// newCompatible talks to any OpenAI-compatible server at
// OPENAI_COMPATIBLE_BASE_URL, with or without a key.
func newCompatible(s Spec, env func(string) string, client *http.Client) (llms.Model, string, error) {
	if strings.TrimSpace(env(EnvCompatibleBaseURL)) == "" {
		return nil, "", fmt.Errorf("model %q: %s is not set; set it to the server's OpenAI-compatible base URL, for example http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:1234/v1 (LM Studio) or http://127.0.0.1:11434/v1 (Ollama)",
			s, EnvCompatibleBaseURL)
	}
	base, err := baseURLFrom(s, env, EnvCompatibleBaseURL, "http://127.0.0.1:8000/v1")
	if err != nil {
		return nil, "", err
	}
	key := strings.TrimSpace(env(EnvCompatibleKey))
	if key == "" {
		key = "none" // the client insists on a token; keyless servers ignore it
	}
	m, err := newWireModel(s, client, base, key, "", false)
	if err != nil {
		return nil, "", err
	}
	return m, base, nil
}

// newOllama talks to Ollama through its OpenAI-compatible /v1 API: the native
// langchaingo Ollama client (v0.1.14) does not send tools, and Dawn's planning
// needs tool calls.
func newOllama(s Spec, env func(string) string, client *http.Client) (llms.Model, string, error) {
	host, err := ollamaHost(s, env(EnvOllamaHost))
	if err != nil {
		return nil, "", err
	}
	base := host + "/v1"
	m, err := newWireModel(s, client, base, "ollama", "", false)
	if err != nil {
		return nil, "", err
	}
	return m, base, nil
}

// wireModel is an OpenAI-wire model: langchaingo's openai client, and the
// fast path (see openAIWire) that checkedModel takes for the calls it
// covers.
type wireModel struct {
	*openai.LLM
	fast *openAIWire
}

// newWireModel returns the model for an OpenAI-wire server at base.
// cacheKey says the server takes a prompt-cache key (OpenAI's own).
func newWireModel(s Spec, client *http.Client, base, key, org string, cacheKey bool) (*wireModel, error) {
	opts := []openai.Option{
		openai.WithModel(s.Name),
		openai.WithToken(key),
		openai.WithBaseURL(base),
		openai.WithHTTPClient(client),
	}
	if cacheKey {
		opts = append(opts, openai.WithOrganization(org))
	}
	m, err := openai.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", s, err)
	}
	return &wireModel{LLM: m, fast: newOpenAIWire(client, base, key, org, s.Name, cacheKey)}, nil
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
