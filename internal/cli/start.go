package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/spf13/cobra"
)

func newStartCmd(cfg *Config) *cobra.Command {
	var dir, host string
	var port int
	var grace time.Duration
	var limits server.HTTPLimits
	var maxRuns int
	var noAuth bool
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the production server",
		Long: `start serves the app's HTTP API with structured (JSON) logs. With
DAWN_API_KEY set, every endpoint but /healthz and /readyz requires
"Authorization: Bearer $DAWN_API_KEY" (the service credential, which sees
every thread) or, with auth.jwt in dawn.yaml, a user's JWT. On a host other
than loopback, start refuses to serve with no authentication unless
--no-auth (or auth: none in dawn.yaml) says so. On loopback with no
credential, it answers only requests whose Host is a loopback name or one of
server.allowed_hosts in dawn.yaml, and whose Origin, when sent, is its own
or one of DAWN_CORS_ORIGINS (403 otherwise: a page elsewhere cannot reach it
by DNS rebinding). DAWN_CORS_ORIGINS (comma-separated) turns CORS on for
those origins. SIGINT or SIGTERM shut it down gracefully:
runs in flight get --grace to finish, then are cancelled and recorded.

Several servers may share one store: each holds a lease on the runs it
starts (DAWN_STORE_LEASE, default 30s, renewed every third of it), and a
server marks runs interrupted only once their server is gone: it stopped,
it is a process on this machine that no longer runs, or its lease expired.

The timeouts and caps bound what one client can hold, and their defaults
are safe for a server on the internet: a request's headers must arrive
within --read-header-timeout and its body within --body-timeout (else 408),
headers over --max-header-bytes get 431, and at most --max-conns
connections are open at once (more wait). Responses are not timed, so a
stream lasts as long as its run. At most --max-runs runs are in flight at
once: a run asked for beyond that gets 503 overloaded with Retry-After,
never a wait; the default stays below --max-conns so that the 503 comes
while there are connections left to send it on.

DAWN_DEBUG_ADDR (a loopback host:port) serves Go's profiles there
(/debug/pprof/), for looking at a server under load.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimits(limits); err != nil {
				return err
			}
			if maxRuns <= 0 {
				return fmt.Errorf("--max-runs %d: pass a positive number", maxRuns)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			tuneGC(ctx, cfg, maxRuns)
			logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			if addr := cfg.Env(EnvDebugAddr); addr != "" {
				if err := serveDebug(ctx, addr, logger); err != nil {
					return err
				}
			}
			a, err := loadApp(ctx, cfg, dir)
			if err != nil {
				return appProblem(err)
			}
			authn, err := startAuth(ctx, cfg, a, host, noAuth, logger)
			if err != nil {
				return err
			}
			opts := server.Options{Auth: authn, HTTP: limits}
			origins, err := server.ParseOrigins(cfg.Env("DAWN_CORS_ORIGINS"))
			if err != nil {
				return fmt.Errorf("DAWN_CORS_ORIGINS: %w", err)
			}
			opts.CORSOrigins = origins
			s, err := openStack(ctx, cfg, a, logger, opts, maxRuns)
			if err != nil {
				return appProblem(err)
			}
			logModels(logger, a, cfg.Env)
			addr := net.JoinHostPort(host, fmt.Sprint(port))
			return s.serve(ctx, addr, startGuard(s.api, a, authn.Enabled(), host, origins), grace, func(addr net.Addr) {
				logger.Info("dawn server ready", "url", "http://"+addr.String(), "routes", len(a.Routes), "auth", authn.Mode(),
					"store", s.store.Path(), "telemetry", s.telemetryOn,
					"max_runs", maxRuns, "max_conns", limits.MaxConns, "body_timeout", limits.BodyTimeout.String())
			})
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().StringVar(&host, "host", "0.0.0.0", "interface to listen on")
	cmd.Flags().IntVar(&port, "port", 8000, "port to listen on")
	cmd.Flags().DurationVar(&grace, "grace", 10*time.Second, "how long runs in flight may take to finish on shutdown")
	cmd.Flags().DurationVar(&limits.ReadHeaderTimeout, "read-header-timeout", server.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers")
	cmd.Flags().DurationVar(&limits.BodyTimeout, "body-timeout", server.DefaultBodyTimeout, "how long a client may take to send a request's body (408 after)")
	cmd.Flags().DurationVar(&limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long an idle kept-alive connection stays open")
	cmd.Flags().IntVar(&limits.MaxHeaderBytes, "max-header-bytes", server.DefaultMaxHeaderBytes, "the most bytes of headers a request may have (431 over)")
	cmd.Flags().IntVar(&limits.MaxConns, "max-conns", server.DefaultMaxConns, "the most connections open at once (more wait)")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "serve on a non-loopback host with no authentication (refused by default)")
	cmd.Flags().IntVar(&maxRuns, "max-runs", runner.DefaultMaxRuns, "the most runs in flight at once (more get 503 overloaded)")
	return cmd
}

// startGuard is api as dawn start serves it on host: a server with no
// credential on a loopback address trusts whoever reaches it, so it
// answers only requests that name it by a loopback name or a name of
// dawn.yaml's server.allowed_hosts, and pages of its own origin or of
// origins (see server.HostGuard); a page on another site cannot reach it
// by rebinding its name to 127.0.0.1. A server with a credential, or one
// on a public interface with none (--no-auth), is served as it is.
func startGuard(api http.Handler, a *app.App, credential bool, host string, origins []string) http.Handler {
	if credential || !loopback(host) {
		return api
	}
	return server.HostGuard{Hosts: a.Config.Server.AllowedHosts, Origins: origins}.Wrap(api)
}

// checkLimits refuses limits that are zero or negative, naming the flag.
func checkLimits(l server.HTTPLimits) error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--read-header-timeout", l.ReadHeaderTimeout}, {"--body-timeout", l.BodyTimeout}, {"--idle-timeout", l.IdleTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %s: pass a positive duration, like 30s", d.flag, d.v)
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"--max-header-bytes", l.MaxHeaderBytes}, {"--max-conns", l.MaxConns}} {
		if n.v <= 0 {
			return fmt.Errorf("%s %d: pass a positive number", n.flag, n.v)
		}
	}
	return nil
}
