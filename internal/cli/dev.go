package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/devserver"
	"github.com/dawn-go/dawn/internal/inspector"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/spf13/cobra"
)

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

For an app with Go code (a main package calling dawn.Main), dev builds
that package into .dawn/bin, runs it, and rebuilds and restarts it when a
.go file, go.mod or go.sum changes, while the address stays the same. A
build that fails keeps the previous build serving. The app's own binary
does the same when its source is at hand (go run . dev in the folder dawn
new wrote), so it too serves every .go edit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d is not a port: pass 1-65535, or 0 for a free one", port)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			tuneGC(ctx, cfg, 0)
			stdout, stderr := devserver.NewLockedWriter(cmd.OutOrStdout()), devserver.NewLockedWriter(cmd.ErrOrStderr())
			child := cfg.Env(devserver.ChildEnv) == "1"
			if mainDir, ok := appMainDir(dir); !child && ok {
				settings, err := app.LoadServer(dir)
				if err != nil {
					return appProblem(err)
				}
				err = devserver.RunGo(ctx, dir, mainDir, port, server.HostGuard{Hosts: settings.AllowedHosts}, stdout, stderr)
				switch {
				case errors.Is(err, devserver.ErrNoGo) && cfg.Stock:
					return appProblem(err)
				case errors.Is(err, devserver.ErrNoGo):
					// The app's own binary (go run . dev) with no go
					// tool to rebuild it: it serves its own code.
					fmt.Fprintf(stderr, "dawn dev: %v\ndawn dev: serving this binary's Go code: a .go edit is not picked up until you build and run it again\n", err)
				default:
					return err
				}
			}
			if child {
				ctx = devserver.UntilStdinCloses(ctx)
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
		devserver.PrintProblems(stderr, "the app has problems; serving the routes that work", err)
	}
	s, err := openStack(ctx, cfg, a, logger, server.Options{}, 0)
	if err == nil {
		inspector.Register(s.api.Echo()) // the dev page at / and /_dawn/
	}
	if err != nil {
		return appProblem(err)
	}
	logModels(logger, a, cfg.Env)
	if auth := a.Config.Auth; auth.JWT != nil || auth.None {
		logger.Warn("dawn dev serves without authentication: dawn.yaml's auth: is for dawn start; here every request is the one local user, on 127.0.0.1 only")
	}
	load := func(ctx context.Context) (*app.App, error) { return loadApp(ctx, cfg, dir) }
	devserver.NewReloader(load, s.runs, stderr).Watch(ctx, logger)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	ready := devserver.ReadyPrefix
	if child {
		ready = devserver.ChildReadyPrefix
	}
	return s.serve(ctx, addr, server.HostGuard{Hosts: a.Config.Server.AllowedHosts}.Wrap(s.api), 5*time.Second, func(addr net.Addr) {
		fmt.Fprintf(stdout, "%shttp://%s\n", ready, addr)
	})
}
