// Package authtest issues real JWTs for tests: HS256 with a shared secret,
// and RS256 with keys published as a JWKS served over loopback, whose key
// can be rotated.
package authtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// Claims are the usual claims of a token for user: sub, aud, iss and an
// expiry an hour ahead.
func Claims(user, issuer, audience string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": user, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	if issuer != "" {
		c["iss"] = issuer
	}
	if audience != "" {
		c["aud"] = audience
	}
	return c
}

// HS256 signs claims with secret.
func HS256(t testing.TB, secret string, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// None returns an unsigned token ("alg": "none") carrying claims.
func None(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// JWKS is an identity provider: an RSA key with a key id, published as a
// JSON Web Key Set at URL.
type JWKS struct {
	// URL serves the key set.
	URL string
	// Fetches counts the requests for the key set.
	Fetches atomic.Int64

	mu  sync.Mutex
	key *rsa.PrivateKey
	kid string
	n   int
	set json.RawMessage
}

// NewJWKS starts a key set server over loopback with a first key.
func NewJWKS(t testing.TB) *JWKS {
	t.Helper()
	j := &JWKS{}
	j.Rotate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		j.Fetches.Add(1)
		j.mu.Lock()
		set := j.set
		j.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(srv.Close)
	j.URL = srv.URL + "/.well-known/jwks.json"
	return j
}

// Rotate replaces the signing key with a new one under a new key id; the
// key set publishes only the new key from then on.
func (j *JWKS) Rotate(t testing.TB) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.n++
	kid := fmt.Sprintf("key-%d", j.n)
	jwk, err := jwkset.NewJWKFromKey(key.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: jwkset.AlgRS256, USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	mem := jwkset.NewMemoryStorage()
	if err := mem.KeyWrite(context.Background(), jwk); err != nil {
		t.Fatal(err)
	}
	set, err := mem.JSONPublic(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	j.key, j.kid, j.set = key, kid, set
}

// Sign signs claims with the current key (RS256, its key id in kid).
func (j *JWKS) Sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	j.mu.Lock()
	key, kid := j.key, j.kid
	j.mu.Unlock()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
