package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/inspector"
	"github.com/dawn-go/dawn/server"
	"github.com/dawn-go/dawn/watch"
	"github.com/spf13/cobra"
)

// reloadDebounce is how long the app folder must be quiet before a reload.
const reloadDebounce = 15 * time.Millisecond

// devReadyPrefix starts the line dev prints once it serves.
const devReadyPrefix = "Dawn dev ready at "

// devChildEnv marks a dev server started by another dev server (the stock
// binary running an app's own binary): it prints childReadyPrefix instead
// of devReadyPrefix, never builds the app itself, and shuts down when its
// standard input closes, so it cannot outlive its parent.
const devChildEnv = "DAWN_DEV_CHILD"

// childReadyPrefix starts the ready line of a dev child.
const childReadyPrefix = "Dawn dev child ready at "

func newDevCmd(cfg *Config) *cobra.Command {
	var dir string
	var port int
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Serve the app on 127.0.0.1 and reload it as you edit",
		Long: `dev serves the app on 127.0.0.1 (a free port unless --port) and prints
"Dawn dev ready at http://127.0.0.1:PORT". Edits to agent.md, plan.md,
state.yaml and dawn.yaml, and route folders added or removed, apply to the
next run without a restart; runs in flight finish on the version they
started with. An edit that breaks a route keeps the last good version
serving and prints the error with its file.

For an app with Go code (a main package calling dawn.Main), the dawn binary
builds that package into .dawn/bin, runs it, and rebuilds and restarts it
when a .go file, go.mod or go.sum changes, while the address stays the same.
A build that fails keeps the previous build serving.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d is not a port: pass 1-65535, or 0 for a free one", port)
			}
			tuneGC(cfg)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			stdout, stderr := newLockedWriter(cmd.OutOrStdout()), newLockedWriter(cmd.ErrOrStderr())
			child := cfg.Env(devChildEnv) == "1"
			if cfg.Stock && !child && hasGoMain(dir) {
				return runDevGo(ctx, dir, port, stdout, stderr)
			}
			if child {
				ctx = untilStdinCloses(ctx)
			}
			return runDev(ctx, cfg, dir, port, child, stdout, stderr)
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (0 picks a free one)")
	return cmd
}

// runDev serves the app in this process and applies edits to it live.
func runDev(ctx context.Context, cfg *Config, dir string, port int, child bool, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := loadApp(ctx, cfg, dir)
	if a == nil || a.Tree == nil {
		return appProblem(err)
	}
	if err != nil {
		printProblems(stderr, "the app has problems; serving the routes that work", err)
	}
	s, err := openStack(ctx, cfg, a, logger, server.Options{})
	if err == nil {
		inspector.Register(s.api.Echo()) // the dev page at / and /_dawn/
	}
	if err != nil {
		return appProblem(err)
	}
	logModels(logger, a, cfg.Env)
	r := &devReloader{cfg: cfg, dir: dir, runs: s.runs, out: stderr, configOK: configLoads(a.Dir)}
	watching := make(chan struct{})
	go func() {
		opts := watch.Options{Debounce: reloadDebounce, Ready: func() { close(watching) }}
		if err := watch.Changes(ctx, a.Dir, opts, func(b watch.Batch) { r.reload(ctx, b) }); err != nil {
			logger.Error("cannot watch the app folder; edits need a restart", "dir", a.Dir, "err", err)
			close(watching)
		}
	}()
	waitWatching(watching)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	ready := devReadyPrefix
	if child {
		ready = childReadyPrefix
	}
	return s.serve(ctx, addr, server.LocalOnly(s.api), 5*time.Second, func(addr net.Addr) {
		fmt.Fprintf(stdout, "%shttp://%s\n", ready, addr)
	})
}

// waitWatching waits for a watcher to be ready, so an edit made right after
// the ready line is seen, but not for long on a huge tree.
func waitWatching(watching <-chan struct{}) {
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
	}
}

// untilStdinCloses returns a context that ends when standard input reaches
// its end: a dev child's parent holds the other end, so the child shuts
// down gracefully however the parent goes away.
func untilStdinCloses(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx
}

// printProblems prints a headline and every problem in err, one a line.
func printProblems(w io.Writer, headline string, err error) {
	var b []byte
	b = fmt.Appendf(b, "dawn dev: %s:\n", headline)
	for _, p := range splitJoined(err) {
		b = fmt.Appendf(b, "  error: %v\n", p)
	}
	_, _ = w.Write(b)
}
