package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// host is what the core offers its wires (wire.Host, and each wire's own
// narrower seam): the runs service (runs
// and their admission, threads, crons and items, each owner-checked), the
// store's assistants, and the mux.
type host struct {
	*runs.Service
	// store keeps the assistants (see assistants.go).
	store store.Store
	s     *Server
	// defaults are the default handlers of Dawn's endpoints (given by
	// Dawn's wire), mounted first; adds are the wires' own endpoints,
	// mounted after them.
	defaults, adds []wireRoute
	// claims are the wires' claims on requests to Dawn's endpoints, by
	// "METHOD path", in the order the wires made them.
	claims map[string][]claim
	// exposed are the response headers the wires let a browser page read.
	exposed []string
}

// claim is a wire's claim on some requests to one of Dawn's endpoints.
type claim struct {
	claims func(echo.Context) (bool, error)
	h      echo.HandlerFunc
}

type wireRoute struct {
	method, path string
	h            echo.HandlerFunc
	m            []echo.MiddlewareFunc
}

// wireHost is the core's host as the seams a wire takes.
func (h *host) wireHost() wire.Host {
	return wire.Host{Mux: h, RunControl: h, Threads: h, Crons: h, Items: h, Assistants: h, Settings: h, Notifier: h, Queue: h, Records: h}
}

func newHost(s *Server) *host {
	return &host{Service: s.svc, store: s.runs.Store(), s: s, claims: map[string][]claim{}}
}

func (h *host) Default(method, path string, fn echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	h.defaults = append(h.defaults, wireRoute{method, path, fn, m})
}

func (h *host) Add(method, path string, fn echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	h.adds = append(h.adds, wireRoute{method, path, fn, m})
}

func (h *host) Claim(method, path string, claims func(echo.Context) (bool, error), fn echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	for i := len(m) - 1; i >= 0; i-- {
		fn = m[i](fn)
	}
	key := method + " " + path
	h.claims[key] = append(h.claims[key], claim{claims, fn})
}

func (h *host) Expose(headers ...string) { h.exposed = append(h.exposed, headers...) }

// handle serves method and path with its default handler fn (Dawn's),
// behind the route middleware m and the owner check (guardThread).
//
// A path that Dawn and another wire share is told apart here, and only
// here (negotiate): a request a wire claims (wire.Mux's Claim) is that
// wire's, every other is Dawn's. The LangGraph dialect claims run
// requests whose body names assistant_id and no route, the runs list
// with a query, and a stream rejoin with cancel_on_disconnect or
// stream_mode.
func (s *Server) handle(r wireRoute) {
	s.echo.Add(r.method, r.path, s.host.negotiate(r.method+" "+r.path, s.guardThread(r.path, r.h, true)), r.m...)
}

// negotiate serves a request to one of Dawn's endpoints, key, with the
// handler of the first wire that claims it, or else with dawn.
func (h *host) negotiate(key string, dawn echo.HandlerFunc) echo.HandlerFunc {
	claims := h.claims[key]
	if len(claims) == 0 {
		return dawn
	}
	return func(c echo.Context) error {
		for _, cl := range claims {
			ok, err := cl.claims(c)
			if err != nil {
				return err
			}
			if ok {
				return cl.h(c)
			}
		}
		return dawn(c)
	}
}

// mountDefaults mounts Dawn's endpoints, each with the claims of the
// wires on it (handle), in the order Dawn's wire gave them.
func (h *host) mountDefaults() {
	for _, r := range h.defaults {
		h.s.handle(r)
	}
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

// SendsWebhooks reports whether the server has webhook settings.
func (h *host) SendsWebhooks() bool { return h.s.runs.SendsWebhooks() }

// Notify records a wire's delivery for the end of one of its runs in the
// webhook outbox (runner.Manager.Notify).
func (h *host) Notify(ctx context.Context, hook store.Webhook) error {
	return h.s.runs.Notify(ctx, hook)
}

func (h *host) Admit(ctx context.Context, req runner.Request, a runs.Admission) (*runner.Run, store.Run, error) {
	run, queued, err := h.Service.Admit(ctx, req, a)
	if errors.Is(err, runner.ErrQueueFull) {
		err = newError(http.StatusTooManyRequests, "queue_full", err.Error())
	}
	return run, queued, err
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
