package cli

import (
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/server"
	"github.com/spf13/cobra"
)

func newStartCmd(cfg *Config) *cobra.Command {
	var dir, host string
	var port int
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the production server",
		Long: `start serves the app's HTTP API with structured (JSON) logs. With
DAWN_API_KEY set, every endpoint but /healthz requires
"Authorization: Bearer $DAWN_API_KEY". DAWN_CORS_ORIGINS (comma-separated)
turns CORS on for those origins. SIGINT or SIGTERM shut it down gracefully:
runs in flight get --grace to finish, then are cancelled and recorded.

Several servers may share one store: each holds a lease on the runs it
starts (DAWN_STORE_LEASE, default 30s, renewed every third of it), and a
server marks runs interrupted only once their server is gone: it stopped,
it is a process on this machine that no longer runs, or its lease expired.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGC(cfg)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			a, err := loadApp(ctx, cfg, dir)
			if err != nil {
				return appProblem(err)
			}
			opts := server.Options{APIKey: cfg.Env("DAWN_API_KEY")}
			if o := cfg.Env("DAWN_CORS_ORIGINS"); o != "" {
				opts.CORSOrigins = strings.Split(o, ",")
			}
			s, err := openStack(ctx, cfg, a, logger, opts)
			if err != nil {
				return appProblem(err)
			}
			logModels(logger, a, cfg.Env)
			addr := net.JoinHostPort(host, fmt.Sprint(port))
			return s.serve(ctx, addr, s.api, grace, func(addr net.Addr) {
				logger.Info("dawn server ready", "url", "http://"+addr.String(), "routes", len(a.Routes), "auth", opts.APIKey != "")
			})
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().StringVar(&host, "host", "0.0.0.0", "interface to listen on")
	cmd.Flags().IntVar(&port, "port", 8000, "port to listen on")
	cmd.Flags().DurationVar(&grace, "grace", 10*time.Second, "how long runs in flight may take to finish on shutdown")
	return cmd
}
