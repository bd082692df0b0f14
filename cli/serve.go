package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/app"
	"github.com/dawn-go/dawn/runner"
	"github.com/dawn-go/dawn/server"
	"github.com/dawn-go/dawn/store"
)

// stack is a running app: its store, runs and HTTP API.
type stack struct {
	store *store.Store
	runs  *runner.Manager
	api   *server.Server
}

// openStack opens the app's store, marks runs a previous process left
// unfinished as interrupted, and builds the API.
func openStack(ctx context.Context, cfg *Config, a *app.App, logger *slog.Logger, opts server.Options) (*stack, error) {
	return openStackFor(ctx, cfg, a, logger, opts, true)
}

// openStackFor is openStack; recoverRuns false leaves runs marked running
// alone, for a short-lived client (dawn run) that may share the store with
// a server whose runs really are in flight.
func openStackFor(ctx context.Context, cfg *Config, a *app.App, logger *slog.Logger, opts server.Options, recoverRuns bool) (*stack, error) {
	path := a.StorePath()
	st, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the thread store: %w", err)
	}
	if recoverRuns {
		n, err := st.RecoverInterrupted(ctx)
		if err != nil {
			st.Close()
			return nil, err
		}
		if n > 0 {
			logger.Warn("marked runs left unfinished by a previous process as interrupted", "runs", n)
		}
	}
	runs := runner.New(st, a, runner.Options{Env: cfg.Env, Logger: logger})
	opts.Env, opts.Logger = cfg.Env, logger
	return &stack{store: st, runs: runs, api: server.New(runs, opts)}, nil
}

// serve listens on addr and serves h until ctx ends, then shuts down
// gracefully: runs in flight get grace to finish and are cancelled (and
// recorded as such) after it. ready is called with the bound address.
func (s *stack) serve(ctx context.Context, addr string, h http.Handler, grace time.Duration, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another server using the port? pass --port)", addr, err)
	}
	limits := s.api.HTTPLimits()
	srv := limits.Server(h)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limits.Listener(ln)) }()
	ready(ln.Addr())
	select {
	case err := <-errc:
		s.store.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.runs.Shutdown(shutdownCtx)
	httpCtx, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if err := srv.Shutdown(httpCtx); err != nil {
		srv.Close()
	}
	if err := s.store.Close(); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logModels says which model each route runs on, and says so loudly when
// that is the offline model because nothing else is configured.
func logModels(logger *slog.Logger, a *app.App, env func(string) string) {
	offline := 0
	for _, r := range a.Describe(env) {
		if r.Model == "offline" {
			offline++
		}
	}
	if offline > 0 {
		logger.Info("using the built-in offline model (no network); set DAWN_MODEL, model in dawn.yaml, or model in agent.md for a real one", "routes", offline)
	}
}
