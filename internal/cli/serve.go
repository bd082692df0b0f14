package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	_ "github.com/dawn-go/dawn/internal/server/wires" // Dawn's other wires: LangGraph, AG-UI, OpenAI, MCP, A2A
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/tmc/langchaingo/llms"
)

// stack is a running app: its store, runs and HTTP API.
type stack struct {
	store  store.Store
	runs   *runner.Manager
	api    *server.Server
	logger *slog.Logger
	// recovers says serve looks for runs of gone owners as it goes.
	recovers bool
	// telemetryShutdown flushes and stops the OpenTelemetry exporters.
	telemetryShutdown func(context.Context) error
	// telemetryOn says OpenTelemetry export is configured.
	telemetryOn bool
	// webhooks sends the POSTs run requests ask for.
	webhooks *webhook.Sender
	// threadSweep is how often serve deletes the threads whose ttl ran
	// out.
	threadSweep time.Duration
}

// openStack opens the app's store, marks the runs of processes that are
// gone as interrupted, and builds the API.
func openStack(ctx context.Context, cfg *Config, a *app.App, logger *slog.Logger, opts server.Options, maxRuns int) (*stack, error) {
	return openStackFor(ctx, cfg, a, logger, opts, true, maxRuns)
}

// openStackFor is openStack; recoverRuns false leaves recovery to the
// servers, for a short-lived client (dawn run). maxRuns caps the runs in
// flight (0: no cap).
//
// Any number of processes may share the store: each is an owner of the
// runs it starts and holds a lease on them (DAWN_STORE_LEASE, default
// 30s), and recovery takes only the runs of owners that are gone.
func openStackFor(ctx context.Context, cfg *Config, a *app.App, logger *slog.Logger, opts server.Options, recoverRuns bool, maxRuns int) (*stack, error) {
	lease, err := storeLease(cfg)
	if err != nil {
		return nil, err
	}
	sweep, err := threadSweepInterval(cfg)
	if err != nil {
		return nil, err
	}
	tel, shutdown, err := telemetry.FromEnv(ctx, cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: %w", err)
	}
	var observe func(context.Context, models.EmbedCall)
	if a.Config.StoreIndex != nil {
		observe = tel.Embeddings(a.Config.StoreIndex.Embed)
	}
	index, err := a.OpenIndex(cfg.Env, observe)
	if err != nil {
		_ = shutdown(ctx)
		return nil, err
	}
	path, setting := storeSetting(cfg, a)
	st, err := store.OpenWith(path, store.Options{Lease: lease, Index: index})
	if err != nil {
		_ = shutdown(ctx)
		return nil, fmt.Errorf("cannot open the thread store named by %s: %w", setting, err)
	}
	s := &stack{store: st, logger: logger, recovers: recoverRuns, threadSweep: sweep}
	s.telemetryShutdown, s.telemetryOn = shutdown, tel != nil
	// Runs to continue need the runner: they are recovered once it is
	// built.
	if recoverRuns && !a.Config.Runs.ContinueOrphans {
		if err := s.recoverRuns(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	if s.webhooks, err = newWebhooks(a.Config.Webhooks, cfg.Env, logger); err != nil {
		st.Close()
		return nil, err
	}
	s.runs = runner.New(st, a, runner.Options{Env: cfg.Env, Models: appModels(a.Dir, cfg.Env), Logger: logger, Telemetry: tel, MaxRuns: maxRuns, Webhooks: s.webhooks})
	opts.Env, opts.Logger = cfg.Env, logger
	s.api = server.New(s.runs, opts)
	if recoverRuns && a.Config.Runs.ContinueOrphans {
		if err := s.recoverRuns(ctx); err != nil {
			s.runs.Shutdown(ctx)
			st.Close()
			return nil, err
		}
	}
	return s, nil
}

// storeSetting returns the store to open, and the setting that named it
// for messages: DAWN_STORE when set, else dawn.yaml's store (a file path,
// or a postgres:// URL several servers share), else .dawn/dawn.db.
func storeSetting(cfg *Config, a *app.App) (dsn, setting string) {
	if v := cfg.Env("DAWN_STORE"); v != "" {
		if store.IsPostgres(v) || filepath.IsAbs(v) || v == ":memory:" {
			return v, "DAWN_STORE"
		}
		return filepath.Join(a.Dir, v), "DAWN_STORE"
	}
	if a.Config.Store != "" {
		return a.StorePath(), "store: in dawn.yaml"
	}
	return a.StorePath(), "the default store (.dawn/dawn.db)"
}

// minLease is the shortest DAWN_STORE_LEASE: a lease much shorter than a
// pause of the process (a GC, a busy disk) would let other servers take
// runs that are in fact alive.
const minLease = time.Second

// storeLease reads DAWN_STORE_LEASE; 0 means the store's default.
func storeLease(cfg *Config) (time.Duration, error) {
	v := cfg.Env("DAWN_STORE_LEASE")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minLease {
		return 0, fmt.Errorf("DAWN_STORE_LEASE=%q: want a duration of at least %v, such as 30s", v, minLease)
	}
	return d, nil
}

// recoverRuns marks the runs of owners that are gone as interrupted, or,
// with runs: {continue_orphans: true}, continues them here.
func (s *stack) recoverRuns(ctx context.Context) error {
	if s.runs != nil && s.runs.App().Config.Runs.ContinueOrphans {
		return s.continueRuns(ctx)
	}
	n, err := s.store.RecoverInterrupted(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		s.logger.Warn("marked the runs of a server that is gone as interrupted", "runs", n, "store", s.store.Path())
	}
	return nil
}

// continueRuns continues here the runs of owners that are gone.
func (s *stack) continueRuns(ctx context.Context) error {
	continued, n, err := s.runs.ContinueOrphans(ctx)
	if err != nil {
		return err
	}
	if continued > 0 {
		s.logger.Warn("continuing the runs of a server that is gone", "runs", continued, "store", s.store.Path())
	}
	if n > 0 {
		s.logger.Warn("marked the runs of a server that is gone as interrupted", "runs", n, "store", s.store.Path())
	}
	return nil
}

// recoverLoop looks for the runs of owners that are gone every third of
// the lease until ctx ends: a server sharing the store that dies has its
// runs interrupted without waiting for a restart.
func (s *stack) recoverLoop(ctx context.Context) {
	everyTick(ctx, s.store.Lease()/3, func() {
		if err := s.recoverRuns(ctx); err != nil && ctx.Err() == nil {
			s.logger.Error("cannot recover the runs of gone servers; trying again", "store", s.store.Path(), "err", err)
		}
	})
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
	loopCtx, cancelLoop := context.WithCancel(ctx)
	var loop sync.WaitGroup
	if s.recovers {
		loop.Go(func() { s.recoverLoop(loopCtx) })
	}
	// Queued runs start when their thread is free: those queued before a
	// restart, behind a run whose replica went away, or delayed.
	loop.Go(func() { s.runs.SweepQueue(loopCtx) })
	// Items put with a ttl are deleted once they expire.
	loop.Go(func() { s.sweepItemsLoop(loopCtx, itemSweep) })
	// Threads created or updated with a ttl are deleted once it runs out.
	loop.Go(func() { s.sweepThreadsLoop(loopCtx, s.threadSweep) })
	stopLoop := func() { cancelLoop(); loop.Wait() } // before the store closes
	ready(ln.Addr())
	select {
	case err := <-errc:
		stopLoop()
		s.store.Close()
		s.flushTelemetry()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.runs.Shutdown(shutdownCtx)
	s.webhooks.Close(shutdownCtx)
	httpCtx, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if err := srv.Shutdown(httpCtx); err != nil {
		srv.Close()
	}
	stopLoop()
	s.flushTelemetry()
	if err := s.store.Close(); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// flushTelemetry sends the spans and metrics still buffered and stops the
// exporters, waiting at most a few seconds for a collector that is slow.
func (s *stack) flushTelemetry() {
	if s.telemetryShutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.telemetryShutdown(ctx); err != nil {
		s.logger.Warn("cannot flush OpenTelemetry data to the collector", "err", err)
	}
}

// appModels builds the models of the app in dir: a script:FILE model
// with a relative FILE reads it from dir.
func appModels(dir string, env func(string) string) runner.ModelFactory {
	return func(spec string) (llms.Model, error) { return models.New(models.ScriptInDir(spec, dir), env) }
}

// logModels says which model each route runs on, says so loudly when
// that is the offline model because nothing else is configured, and
// warns of each model the server cannot make (a provider's key or URL
// is not set), naming its routes, before their first run fails. It then
// logs the routes' notices (see logNotices).
func logModels(logger *slog.Logger, a *app.App, env func(string) string) {
	defer logNotices(logger, a)
	offline := 0
	byModel := map[string][]string{}
	for _, r := range a.Describe(env) {
		if r.Model == "offline" {
			offline++
		}
		byModel[r.Model] = append(byModel[r.Model], r.ID)
	}
	if offline > 0 {
		logger.Info("using the built-in offline model (no network); set DAWN_MODEL, model in dawn.yaml, or model in agent.md for a real one", "routes", offline)
	}
	for _, spec := range slices.Sorted(maps.Keys(byModel)) {
		if _, err := models.New(models.ScriptInDir(spec, a.Dir), env); err != nil {
			logger.Warn("these routes cannot run until their model is configured; their runs answer 503 model_unavailable", "model", spec, "routes", byModel[spec], "err", err)
		}
	}
}

// logNotices logs, as warnings, what the routes' capabilities ask a server
// to say when it starts (a safety check turned off), once per notice with
// the routes it holds for.
func logNotices(logger *slog.Logger, a *app.App) {
	byNotice := map[string][]string{}
	for id, p := range a.Routes {
		for _, n := range p.Notices {
			byNotice[n] = append(byNotice[n], id)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byNotice)) {
		routes := byNotice[n]
		slices.Sort(routes)
		logger.Warn(n, "routes", routes)
	}
}
