package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/auth"
)

// startAuth builds the authentication of dawn start and refuses to serve
// a non-loopback host without any (the secure default), unless the
// operator says so with --no-auth or auth: none.
func startAuth(ctx context.Context, cfg *Config, a *app.App, host string, noAuth bool, logger *slog.Logger) (*auth.Authenticator, error) {
	authn, err := auth.New(ctx, auth.Options{Config: a.Config.Auth, APIKey: cfg.Env("DAWN_API_KEY"), Custom: cfg.Auth, Env: cfg.Env, Dir: a.Dir, Logger: logger})
	if err != nil {
		return nil, appProblem(fmt.Errorf("%s: %w", app.ConfigFile, err))
	}
	if authn.Enabled() || noAuth || a.Config.Auth.None || loopback(host) {
		return authn, nil
	}
	return nil, appProblem(fmt.Errorf(`refusing to listen on %s with no authentication: anyone who reaches the port could read and run every thread.
Configure one of:
  - DAWN_API_KEY=<secret>: a service credential clients send as "Authorization: Bearer <secret>"
  - auth: {jwt: {secret_env | public_key_file | jwks_url, audience, issuer}} in dawn.yaml: users with JWTs (see docs/auth.md)
  - --host 127.0.0.1: listen on this machine only
or say that no authentication is wanted with --no-auth (or auth: none in dawn.yaml)`, net.JoinHostPort(host, "PORT")))
}

// loopback reports whether host is reachable from this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
