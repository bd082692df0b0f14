package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/golang-jwt/jwt/v5"
)

// serve answers each request with who sent it, or 401 with the refusal,
// over loopback.
func serve(t *testing.T, a *auth.Authenticator) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := a.Authenticate(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(id)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// call sends header: value and returns the status and body.
func call(t *testing.T, url, header, value string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if header != "" {
		req.Header.Set(header, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

const secret = "a-shared-secret-of-some-length"

func hsAuth(t *testing.T) *auth.Authenticator {
	t.Helper()
	env := map[string]string{"DAWN_JWT_SECRET": secret}
	a, err := auth.New(context.Background(), auth.Options{
		Config: auth.Config{JWT: &auth.JWT{SecretEnv: "DAWN_JWT_SECRET", Issuer: "https://id.test", Audience: "dawn"}},
		APIKey: "service-key",
		Env:    func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestHS256: a valid token names its user; expired, wrongly signed,
// wrong-audience, wrong-issuer, alg none and missing tokens are refused
// with a message naming the check that failed; the service key is the
// service.
func TestHS256(t *testing.T) {
	a := hsAuth(t)
	if a.Mode() != "jwt hs256 + api-key" {
		t.Fatalf("mode %q", a.Mode())
	}
	srv := serve(t, a)
	good := authtest.Claims("alice", "https://id.test", "dawn")
	status, body := call(t, srv.URL, "Authorization", "Bearer "+authtest.HS256(t, secret, good))
	if status != 200 || !strings.Contains(body, `"user":"alice"`) {
		t.Fatalf("valid token: %d %s", status, body)
	}
	if status, body = call(t, srv.URL, "X-Api-Key", authtest.HS256(t, secret, good)); status != 200 || !strings.Contains(body, `"user":"alice"`) {
		t.Fatalf("valid token in X-Api-Key: %d %s", status, body)
	}
	if status, body = call(t, srv.URL, "Authorization", "Bearer service-key"); status != 200 || !strings.Contains(body, `"service":true`) {
		t.Fatalf("service key: %d %s", status, body)
	}
	expired := authtest.Claims("alice", "https://id.test", "dawn")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	wrongAud := authtest.Claims("alice", "https://id.test", "other")
	wrongIss := authtest.Claims("alice", "https://evil.test", "dawn")
	noSub := authtest.Claims("", "https://id.test", "dawn")
	for _, c := range []struct{ name, header, value, want string }{
		{"expired", "Authorization", "Bearer " + authtest.HS256(t, secret, expired), "expired"},
		{"wrongly signed", "Authorization", "Bearer " + authtest.HS256(t, "another-secret", good), "signature is invalid"},
		{"wrong audience", "Authorization", "Bearer " + authtest.HS256(t, secret, wrongAud), `audience is wrong: expected aud "dawn"`},
		{"wrong issuer", "Authorization", "Bearer " + authtest.HS256(t, secret, wrongIss), `issuer is wrong: expected iss "https://id.test"`},
		{"alg none", "Authorization", "Bearer " + authtest.None(t, good), "algorithm is not accepted"},
		{"no user", "Authorization", "Bearer " + authtest.HS256(t, secret, noSub), `"sub" claim`},
		{"not a jwt", "Authorization", "Bearer nonsense", "malformed"},
		{"wrong service key", "X-Api-Key", "service-kez", "malformed"},
		{"no token", "", "", "missing credentials"},
	} {
		status, body := call(t, srv.URL, c.header, c.value)
		if status != 401 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q, want 401 saying %q", c.name, status, body, c.want)
		}
		if strings.Contains(body, secret) {
			t.Errorf("%s: the refusal shows the secret: %s", c.name, body)
		}
	}
}

// TestJWKSRotation: RS256 tokens verify against a JWKS served over
// loopback; after the provider rotates its key, the first token with the
// new key id fetches the set again and passes, while a token of the
// retired key is refused.
func TestJWKSRotation(t *testing.T) {
	idp := authtest.NewJWKS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := auth.New(ctx, auth.Options{Config: auth.Config{JWT: &auth.JWT{JWKSURL: idp.URL, Audience: "dawn"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != "jwks" {
		t.Fatalf("mode %q", a.Mode())
	}
	srv := serve(t, a)
	old := idp.Sign(t, authtest.Claims("bob", "", "dawn"))
	if status, body := call(t, srv.URL, "Authorization", "Bearer "+old); status != 200 || !strings.Contains(body, `"user":"bob"`) {
		t.Fatalf("first key: %d %s", status, body)
	}
	fetched := idp.Fetches.Load()
	if fetched != 1 {
		t.Fatalf("the key set was fetched %d times before rotation, want once (cached)", fetched)
	}
	idp.Rotate(t)
	rotated := idp.Sign(t, authtest.Claims("bob", "", "dawn"))
	if status, body := call(t, srv.URL, "Authorization", "Bearer "+rotated); status != 200 || !strings.Contains(body, `"user":"bob"`) {
		t.Fatalf("rotated key: %d %s", status, body)
	}
	if idp.Fetches.Load() != fetched+1 {
		t.Fatalf("the new key id fetched the set %d times, want once", idp.Fetches.Load()-fetched)
	}
	if status, body := call(t, srv.URL, "Authorization", "Bearer "+old); status != 401 || !strings.Contains(body, "cannot be verified") {
		t.Fatalf("retired key: %d %s", status, body)
	}
	// A made-up key id right after is refused without fetching again:
	// unknown key ids refresh at most once a minute.
	before := idp.Fetches.Load()
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, authtest.Claims("bob", "", "dawn"))
	forged.Header["kid"] = "made-up"
	s, _ := forged.SignedString([]byte("x"))
	if status, _ := call(t, srv.URL, "Authorization", "Bearer "+s); status != 401 {
		t.Fatalf("made-up kid: %d", status)
	}
	if idp.Fetches.Load() != before {
		t.Fatalf("a made-up key id fetched the set again within the rate limit")
	}
}

// TestES256PublicKeyFile: auth.jwt.public_key_file with an ECDSA key
// verifies ES256 tokens and refuses HS256 ones signed with the PEM text
// (the algorithm-confusion attack).
func TestES256PublicKeyFile(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(key.Public())
	pemText := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "idp.pem"), pemText, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Options{Config: auth.Config{JWT: &auth.JWT{PublicKeyFile: "idp.pem", UserClaim: "email"}}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != "jwt es256" {
		t.Fatalf("mode %q", a.Mode())
	}
	srv := serve(t, a)
	claims := authtest.Claims("u-1", "", "")
	claims["email"] = "carol@example.com"
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := call(t, srv.URL, "Authorization", "Bearer "+tok); status != 200 || !strings.Contains(body, `"user":"carol@example.com"`) {
		t.Fatalf("ES256: %d %s", status, body)
	}
	confused := authtest.HS256(t, string(pemText), claims)
	if status, body := call(t, srv.URL, "Authorization", "Bearer "+confused); status != 401 || !strings.Contains(body, "algorithm is not accepted") {
		t.Fatalf("HS256 signed with the public key: %d %s", status, body)
	}
}

// TestConfigErrors: a JWT section with no key source, two, or an empty
// secret variable is refused with what to set.
func TestConfigErrors(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct {
		jwt  auth.JWT
		want string
	}{
		{auth.JWT{}, "exactly one of"},
		{auth.JWT{SecretEnv: "S", JWKSURL: "http://x"}, "exactly one of"},
		{auth.JWT{SecretEnv: "DAWN_JWT_SECRET"}, "DAWN_JWT_SECRET, which is empty"},
		{auth.JWT{PublicKeyFile: filepath.Join(t.TempDir(), "none.pem")}, "public_key_file"},
	} {
		_, err := auth.New(context.Background(), auth.Options{Config: auth.Config{JWT: &c.jwt}, Env: env})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.jwt, err, c.want)
		}
	}
}

// TestModes: what the start-up log names.
func TestModes(t *testing.T) {
	for _, c := range []struct {
		opts auth.Options
		want string
	}{
		{auth.Options{}, "none"},
		{auth.Options{APIKey: "k"}, "api-key"},
		{auth.Options{Custom: func(*http.Request) (capabilities.Identity, error) { return capabilities.Identity{User: "x"}, nil }}, "custom"},
	} {
		a, err := auth.New(context.Background(), c.opts)
		if err != nil || a.Mode() != c.want {
			t.Errorf("mode %q %v, want %q", a.Mode(), err, c.want)
		}
	}
}
