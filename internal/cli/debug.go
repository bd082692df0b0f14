package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// EnvDebugAddr names a loopback address where dawn start serves Go's
// profiles (net/http/pprof: /debug/pprof/heap, /debug/pprof/profile,
// /debug/pprof/goroutine, ...), for looking at a server under load. Unset,
// nothing is served.
const EnvDebugAddr = "DAWN_DEBUG_ADDR"

// serveDebug serves the profiles on addr until ctx ends. Only a loopback
// address is accepted: a profile shows the process's memory.
func serveDebug(ctx context.Context, addr string, logger *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s=%q: want host:port on loopback, like 127.0.0.1:6060: %w", EnvDebugAddr, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s=%q: profiles are served on loopback only (they show the process's memory); use 127.0.0.1:PORT", EnvDebugAddr, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvDebugAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("the profile server stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	logger.Info("serving Go profiles", "profiles", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
