package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// host is the wire.Host the core offers its wires: the runner's runs, the
// store's reads of threads and runs (and, for the core itself, thread
// creation), and the mux.
type host struct {
	store.Store
	s *Server
	// adds are the wires' own endpoints, mounted after Dawn's.
	adds []wireRoute
	// intercepts are the wires' middleware in front of Dawn's handlers, by
	// "METHOD path".
	intercepts map[string][]echo.MiddlewareFunc
	// exposed are the response headers the wires let a browser page read.
	exposed []string
	// cronStarter starts the runs of cron ticks, given by a wire.
	cronStarter crons.Starter
}

type wireRoute struct {
	method, path string
	h            echo.HandlerFunc
	m            []echo.MiddlewareFunc
}

var _ wire.Host = (*host)(nil)

func newHost(s *Server) *host {
	return &host{Store: s.runs.Store(), s: s, intercepts: map[string][]echo.MiddlewareFunc{}}
}

func (h *host) Add(method, path string, fn echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	h.adds = append(h.adds, wireRoute{method, path, fn, m})
}

func (h *host) Intercept(method, path string, mw echo.MiddlewareFunc) {
	key := method + " " + path
	h.intercepts[key] = append(h.intercepts[key], mw)
}

func (h *host) Expose(headers ...string) { h.exposed = append(h.exposed, headers...) }

// handle serves method and path with Dawn's handler fn, behind the route
// middleware m, the wires' intercepts of it (the first intercept sees the
// request first) and the owner check (guardThread).
func (s *Server) handle(method, path string, fn echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	fn = s.guardThread(path, fn, true)
	mws := s.host.intercepts[method+" "+path]
	for i := len(mws) - 1; i >= 0; i-- {
		fn = mws[i](fn)
	}
	s.echo.Add(method, path, fn, m...)
}

// mountWires mounts the wires' own endpoints, in the order they added
// them.
func (h *host) mountWires() {
	for _, r := range h.adds {
		h.s.echo.Add(r.method, r.path, h.s.guardThread(r.path, r.h, true), r.m...)
	}
}

func (h *host) ParseSchedule(schedule, timezone string) (crons.Schedule, error) {
	return crons.Parse(schedule, timezone, h.s.cronOpts.Seconds)
}

func (h *host) CheckWebhook(ctx context.Context, url string) error {
	return h.s.runs.CheckWebhook(ctx, url)
}

func (h *host) App() *app.App { return h.s.runs.App() }

// RollbackRun stops run r, here or on another replica, and discards its
// steps; another user's run is one that does not exist.
func (h *host) RollbackRun(ctx context.Context, r store.Run, wait bool) (bool, error) {
	if err := h.runVisible(ctx, r.ID); err != nil {
		return false, err
	}
	if live := h.s.runs.Active(r.ThreadID); live != nil && live.ID == r.ID {
		live.Rollback()
		if wait {
			select {
			case <-live.Done():
			case <-ctx.Done():
				return true, ctx.Err()
			}
		}
		return true, nil
	}
	remote, ok := h.s.runs.RemoteRun(ctx, r.ThreadID)
	if !ok || remote.ID != r.ID {
		return false, nil
	}
	return true, h.s.stopRemote(ctx, remote, wait, "rollback")
}

func (h *host) Admit(ctx context.Context, req runner.Request, strategy string, at time.Time) (*runner.Run, store.Run, error) {
	run, queued, err := h.s.admit(ctx, req, strategy, at)
	return run, queued, queuedError(err)
}

// ClearThread, AwaitStart and Dequeue act on another user's thread or run
// as on one that does not exist.
func (h *host) ClearThread(ctx context.Context, threadID string, rollback bool) error {
	if err := h.visible(ctx, threadID); err != nil {
		return err
	}
	return h.s.clearThread(ctx, threadID, rollback)
}

func (h *host) AwaitStart(ctx context.Context, runID string) (store.Run, error) {
	if err := h.runVisible(ctx, runID); err != nil {
		return store.Run{}, err
	}
	return h.s.runs.AwaitStart(ctx, runID)
}

func (h *host) Dequeue(ctx context.Context, runID string) error {
	if err := h.runVisible(ctx, runID); err != nil {
		return err
	}
	return h.s.runs.Dequeue(ctx, runID)
}

func (h *host) Follow(runID string, after int64) *runner.Follower {
	return h.s.runs.Follow(runID, after)
}

func (h *host) Subscribed() func() { return h.s.runs.Telemetry().Subscribed() }

func (h *host) Logger() *slog.Logger { return h.s.logger }

func (h *host) Classify(err error) *wire.Error { return classify(err) }

func (h *host) AuthMode() string {
	if !h.s.auth.Enabled() {
		return "none"
	}
	return h.s.auth.Mode()
}

func (h *host) Env(key string) string {
	if h.s.opts.Env == nil {
		return ""
	}
	return h.s.opts.Env(key)
}

// RunOptions reads the options of the app's run strategies from the body:
// each is a string, like "plan_first": "preview".
func (h *host) RunOptions(fields map[string]json.RawMessage) (map[string]string, error) {
	var opts map[string]string
	for _, mk := range h.App().Config.Markers {
		rs, ok := mk.(capabilities.RunStrategy)
		if !ok {
			continue
		}
		name := rs.RunOption()
		raw, ok := fields[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, newError(http.StatusBadRequest, "invalid_body", fmt.Sprintf("%s must be a string, like %q: %q", name, name, "off"))
		}
		if opts == nil {
			opts = map[string]string{}
		}
		opts[name] = v
	}
	return opts, nil
}
