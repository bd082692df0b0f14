package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// leeway is the clock skew allowed on exp, nbf and iat.
const leeway = 30 * time.Second

// jwksUnknownKID bounds the refreshes a token with a key id the cached set
// lacks may cause: one at once (so a rotated key is fetched on its first
// use), then at most one a minute, so tokens with made-up key ids cannot
// make the server hammer the key set's host.
var jwksUnknownKID = func() *rate.Limiter { return rate.NewLimiter(rate.Every(time.Minute), 1) }

// JWKSRefresh is how often the key set is fetched again.
const JWKSRefresh = time.Hour

// verifier checks bearer tokens with one key source.
type verifier struct {
	cfg     JWT
	claim   string
	parser  *jwt.Parser
	keyfunc jwt.Keyfunc
}

// newVerifier builds the verifier of cfg and names its mode.
func newVerifier(ctx context.Context, cfg JWT, opts Options) (*verifier, string, error) {
	n := 0
	for _, s := range []string{cfg.SecretEnv, cfg.PublicKeyFile, cfg.JWKSURL} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, "", errors.New("auth.jwt: set exactly one of secret_env (HS256), public_key_file (RS256 or ES256) or jwks_url")
	}
	v := &verifier{cfg: cfg, claim: cfg.UserClaim}
	if v.claim == "" {
		v.claim = "sub"
	}
	var methods []string
	var mode string
	switch {
	case cfg.SecretEnv != "":
		secret := ""
		if opts.Env != nil {
			secret = opts.Env(cfg.SecretEnv)
		}
		if secret == "" {
			return nil, "", fmt.Errorf("auth.jwt.secret_env names %s, which is empty: set it to the HS256 secret your identity provider signs with", cfg.SecretEnv)
		}
		key := []byte(secret)
		v.keyfunc = func(*jwt.Token) (any, error) { return key, nil }
		methods, mode = []string{"HS256", "HS384", "HS512"}, "jwt hs256"
	case cfg.PublicKeyFile != "":
		key, m, err := readPublicKey(cfg.PublicKeyFile, opts.Dir)
		if err != nil {
			return nil, "", err
		}
		v.keyfunc = func(*jwt.Token) (any, error) { return key, nil }
		methods, mode = m, "jwt "+strings.ToLower(m[0])
	default:
		kf, err := newJWKS(ctx, cfg.JWKSURL, opts.Logger)
		if err != nil {
			return nil, "", err
		}
		v.keyfunc = kf
		methods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
		mode = "jwks"
	}
	popts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithLeeway(leeway), jwt.WithExpirationRequired()}
	if cfg.Issuer != "" {
		popts = append(popts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		popts = append(popts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(popts...)
	return v, mode, nil
}

// readPublicKey reads a PEM public key and the algorithms it verifies.
func readPublicKey(file, dir string) (any, []string, error) {
	path := file
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("auth.jwt.public_key_file: %w", err)
	}
	if k, err := jwt.ParseRSAPublicKeyFromPEM(data); err == nil {
		return k, []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, nil
	}
	if k, err := jwt.ParseECPublicKeyFromPEM(data); err == nil {
		return k, []string{"ES256", "ES384", "ES512"}, nil
	}
	return nil, nil, fmt.Errorf("auth.jwt.public_key_file %s: not a PEM RSA or ECDSA public key", file)
}

// newJWKS returns the keyfunc of the key set at url: fetched now, again
// every JWKSRefresh, and when a token names a key id it lacks (rate
// limited by jwksUnknownKID).
func newJWKS(ctx context.Context, url string, logger *slog.Logger) (jwt.Keyfunc, error) {
	if logger == nil {
		logger = slog.Default()
	}
	k, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{
		HTTPTimeout:       10 * time.Second,
		RateLimitWaitMax:  10 * time.Second,
		RefreshInterval:   JWKSRefresh,
		RefreshUnknownKID: jwksUnknownKID(),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				logger.Error("auth: fetching the JWKS failed; tokens signed with keys not cached are refused", "url", u, "err", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("auth.jwt.jwks_url %s: %w", url, err)
	}
	return k.Keyfunc, nil
}

// identify verifies r's bearer token and names its user.
func (v *verifier) identify(r *http.Request) (capabilities.Identity, error) {
	tok := Credential(r)
	if tok == "" {
		return capabilities.Identity{}, missing("JWT bearer tokens")
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(tok, claims, v.keyfunc); err != nil {
		return capabilities.Identity{}, v.refusal(err)
	}
	user, _ := claims[v.claim].(string)
	if strings.TrimSpace(user) == "" {
		return capabilities.Identity{}, &Error{Msg: fmt.Sprintf("invalid token: its %q claim (auth.jwt.user_claim) names no user", v.claim)}
	}
	return capabilities.Identity{User: user, Claims: claims}, nil
}

// refusal says which check a token failed, naming what was expected but
// never a key.
func (v *verifier) refusal(err error) *Error {
	var msg string
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		msg = "token expired: get a new one"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		msg = "token is not valid yet (nbf or iat in the future)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		msg = "token has no exp claim: tokens must expire"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		msg = fmt.Sprintf("token audience is wrong: expected aud %q", v.cfg.Audience)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		msg = fmt.Sprintf("token issuer is wrong: expected iss %q", v.cfg.Issuer)
	case errors.Is(err, jwt.ErrTokenMalformed):
		msg = "token is malformed: send a JWT (header.payload.signature)"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		msg = "token algorithm is not accepted: " + algorithmOf(err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		msg = "token signature is invalid"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		msg = "token cannot be verified: its key is unknown (kid not in the key set) or its algorithm is not accepted"
	default:
		msg = "token is invalid"
	}
	return &Error{Msg: "invalid token: " + msg}
}

// algorithmOf returns the part of a parser error that names the refused
// algorithm.
func algorithmOf(err error) string {
	s := err.Error()
	if i := strings.Index(s, "signing method"); i >= 0 {
		return s[i:]
	}
	return s
}
