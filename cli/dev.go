package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/app"
	"github.com/dawn-go/dawn/server"
	"github.com/dawn-go/dawn/watch"
	"github.com/spf13/cobra"
)

// reloadDebounce is how long the app folder must be quiet before a reload.
const reloadDebounce = 15 * time.Millisecond

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
started with. An edit that breaks the app keeps the last good version
serving and prints the error with its file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runDev(ctx, cfg, dir, port, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (0 picks a free one)")
	return cmd
}

func runDev(ctx context.Context, cfg *Config, dir string, port int, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := loadApp(ctx, cfg, dir)
	if a == nil || a.Tree == nil {
		return appProblem(err)
	}
	if err != nil {
		printProblems(stderr, "the app has problems; serving the routes that work", err)
	}
	s, err := openStack(ctx, cfg, a, logger, server.Options{})
	if err != nil {
		return appProblem(err)
	}
	logModels(logger, a, cfg.Env)
	go func() {
		err := watch.Watch(ctx, a.Dir, reloadDebounce, func(paths []string) {
			if !needsReload(paths) {
				return
			}
			start := time.Now()
			next, err := loadApp(ctx, cfg, dir)
			if err != nil || next == nil || next.Tree == nil {
				printProblems(stderr, "reload failed; still serving the last good version", err)
				return
			}
			s.runs.SetApp(next)
			fmt.Fprintf(stderr, "dawn dev: reloaded %d route(s) in %s (%s)\n", len(next.Routes), time.Since(start).Round(time.Microsecond), relPaths(a.Dir, paths))
		})
		if err != nil {
			logger.Error("cannot watch the app folder; edits need a restart", "err", err)
		}
	}()
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	return s.serve(ctx, addr, s.api, 5*time.Second, func(addr net.Addr) {
		fmt.Fprintf(stdout, "Dawn dev ready at http://%s\n", addr)
	})
}

// needsReload reports whether a change touches what the app snapshot is built
// from: Markdown, YAML, or folders (added or removed routes).
func needsReload(paths []string) bool {
	for _, p := range paths {
		switch strings.ToLower(filepath.Ext(p)) {
		case ".go":
			continue
		default:
			return true
		}
	}
	return false
}

func printProblems(w io.Writer, headline string, err error) {
	fmt.Fprintf(w, "dawn dev: %s:\n", headline)
	for _, p := range splitJoined(err) {
		fmt.Fprintf(w, "  error: %v\n", p)
	}
}

func relPaths(root string, paths []string) string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.Rel(root, p); err == nil {
			p = r
		}
		out = append(out, filepath.ToSlash(p))
	}
	if len(out) > 3 {
		return strings.Join(out[:3], ", ") + fmt.Sprintf(" and %d more", len(out)-3)
	}
	return strings.Join(out, ", ")
}

var _ = app.ConfigFile
