// Package auth says who sent a request to the HTTP API: the service
// credential (DAWN_API_KEY), a user named by a JWT that dawn.yaml's
// auth.jwt verifies (a shared secret, a public key file or a JWKS URL), or
// an app's own function (dawn.WithAuth).
package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// Config is dawn.yaml's auth: section.
type Config struct {
	// None is "auth: none": the operator's explicit word that the server
	// may listen beyond loopback with no authentication.
	None bool
	// JWT verifies bearer tokens; nil when auth.jwt is not set.
	JWT *JWT
}

// JWT is dawn.yaml's auth.jwt: where the verification key comes from
// (exactly one of SecretEnv, PublicKeyFile, JWKSURL) and which claims are
// checked.
type JWT struct {
	// SecretEnv names the environment variable holding the HS256 secret.
	SecretEnv string
	// PublicKeyFile is a PEM RSA or ECDSA public key (RS256, ES256),
	// relative to the app folder.
	PublicKeyFile string
	// JWKSURL is a JSON Web Key Set; its keys are cached and refreshed.
	JWKSURL string
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// UserClaim is the claim naming the user; empty means "sub".
	UserClaim string
}

// Func authenticates a request the way dawn.WithAuth installs it: an
// error answers 401 with its text.
type Func func(*http.Request) (capabilities.Identity, error)

// Error is a refused credential: the server answers 401 with Msg, which
// never holds a secret.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Options are what New builds an Authenticator from.
type Options struct {
	// Config is dawn.yaml's auth section.
	Config Config
	// APIKey is the service credential (DAWN_API_KEY); empty means none.
	APIKey string
	// Custom is the app's own authenticator (dawn.WithAuth); it replaces
	// Config.JWT.
	Custom Func
	// Env reads the environment (auth.jwt.secret_env).
	Env func(string) string
	// Dir is the app folder public_key_file is relative to.
	Dir    string
	Logger *slog.Logger
}

// Authenticator tells who sent a request.
type Authenticator struct {
	apiKey []byte
	// users names the users: a JWT verifier or the app's function; nil
	// when only the service credential, or nothing, is configured.
	users Func
	mode  string
}

// New returns the Authenticator opts configure. The context bounds the
// JWKS refresh, which New starts for auth.jwt.jwks_url.
func New(ctx context.Context, opts Options) (*Authenticator, error) {
	a := &Authenticator{apiKey: []byte(opts.APIKey)}
	switch {
	case opts.Custom != nil:
		a.users, a.mode = opts.Custom, "custom"
	case opts.Config.JWT != nil:
		v, mode, err := newVerifier(ctx, *opts.Config.JWT, opts)
		if err != nil {
			return nil, err
		}
		a.users, a.mode = v.identify, mode
	}
	switch {
	case a.users != nil && len(a.apiKey) > 0:
		a.mode += " + api-key"
	case a.users == nil && len(a.apiKey) > 0:
		a.mode = "api-key"
	case a.users == nil:
		a.mode = "none"
	}
	return a, nil
}

// Mode names how requests are authenticated, for the start-up log:
// "none", "api-key", "jwt hs256", "jwt rs256", "jwt es256", "jwks" or
// "custom", the last four followed by " + api-key" when DAWN_API_KEY is
// also set.
func (a *Authenticator) Mode() string { return a.mode }

// Enabled reports whether requests need a credential.
func (a *Authenticator) Enabled() bool { return a != nil && a.mode != "none" }

// Names reports whether the authenticator names users (a JWT or the app's
// function), not only the service credential.
func (a *Authenticator) Names() bool { return a != nil && a.users != nil }

// Authenticate returns who sent r: the service identity for DAWN_API_KEY
// (as "Authorization: Bearer KEY" or "X-Api-Key: KEY"), else the user the
// configured verifier names. An *Error says why a credential is refused.
func (a *Authenticator) Authenticate(r *http.Request) (capabilities.Identity, error) {
	tok := Credential(r)
	if len(a.apiKey) > 0 && tok != "" && subtle.ConstantTimeCompare([]byte(tok), a.apiKey) == 1 {
		return capabilities.Identity{Service: true}, nil
	}
	if a.users == nil {
		return capabilities.Identity{}, &Error{Msg: "missing or wrong API key: send Authorization: Bearer <DAWN_API_KEY> (or X-Api-Key: <DAWN_API_KEY>)"}
	}
	id, err := a.users(r)
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return id, ae
		}
		return id, &Error{Msg: err.Error()}
	}
	if id.Service {
		return id, nil
	}
	if strings.TrimSpace(id.User) == "" {
		return id, &Error{Msg: "the credential names no user"}
	}
	return id, nil
}

// Credential returns the token r carries: "Authorization: Bearer TOKEN"
// (exactly so: the server has always compared the whole header), or
// "X-Api-Key: TOKEN" as the LangGraph SDK sends it; "" for none.
func Credential(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, _ := strings.CutPrefix(h, "Bearer ")
		if tok == h {
			return ""
		}
		return tok
	}
	return r.Header.Get("X-Api-Key")
}

// missing is the refusal of a request with no credential at all.
func missing(mode string) *Error {
	return &Error{Msg: fmt.Sprintf("missing credentials: send Authorization: Bearer <token> (this server authenticates with %s)", mode)}
}
