package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Options configure a Server.
type Options struct {
	// APIKey, when set, is required as "Authorization: Bearer KEY" (or
	// "X-Api-Key: KEY", as the LangGraph SDK sends it) on every endpoint but
	// /healthz and /readyz (probes send no key).
	APIKey string
	// Auth, when set, authenticates every request instead (JWTs, an app's
	// own function, and the service credential); the identity it names is
	// attached to the request's context (capabilities.IdentityFrom).
	Auth *auth.Authenticator
	// CORSOrigins lists origins allowed to call the API from a browser,
	// like "https://app.example.com" (see ParseOrigins); empty turns CORS
	// off.
	CORSOrigins []string
	// Env reads environment variables (for the model each route uses).
	Env    func(string) string
	Logger *slog.Logger
	// HTTP bounds what one client may hold; zero fields take the defaults.
	HTTP HTTPLimits
}

// corsHeaders are the request headers a browser on an allowed origin may
// send. The response headers its scripts may read are those the wires
// expose (wire.Mux's Expose), in the order the wires are mounted.
var corsHeaders = []string{"Authorization", "Content-Type", "Last-Event-ID", "X-Api-Key"}

// Server is the HTTP API.
type Server struct {
	echo *echo.Echo
	runs *runner.Manager
	// svc is the runs service below every wire: admission, ownership,
	// stopping runs here or on another replica.
	svc    *runs.Service
	opts   Options
	logger *slog.Logger
	// host is what the wires mount on and read runs and threads through.
	host *host
	// auth names who sends each request; nil or disabled attaches no
	// identity.
	auth *auth.Authenticator
	// audited maps "METHOD path" to the action the audit log records for
	// the endpoint's calls (see auditCalls).
	audited map[string]string
	// cronOpts configure the scheduler of crons (see cronOptions).
	cronOpts crons.Options
	// inFlight counts each user's requests in flight
	// (limits.per_user.connections).
	inFlight userRequests
}

// New returns the API for the runs managed by m: its health probes, and
// every registered wire (wire.Register) mounted on it, in the order they
// were registered. A program registers Dawn's wires, its own
// (internal/server/dawn) first, by importing internal/server/wires.
func New(m *runner.Manager, opts Options) *Server {
	s := &Server{echo: echo.New(), runs: m, svc: runs.New(m), opts: opts, logger: opts.Logger, audited: maps.Clone(defaultAudited)}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.cronOpts = cronOptions(opts.Env, s.logger)
	s.host = newHost(s)
	for _, w := range wire.Registered() {
		w.Mount(s.host.wireHost())
	}
	s.svc.ServeCrons(s.cronOpts)
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.recoverPanics)
	if t := m.Telemetry(); t != nil {
		e.Use(echo.WrapMiddleware(t.Middleware))
	}
	if origins := trimOrigins(opts.CORSOrigins); len(origins) > 0 {
		e.Use(middleware.CORSWithConfig(middleware.CORSConfig{AllowOrigins: origins, AllowHeaders: corsHeaders, ExposeHeaders: s.host.exposed}))
	}
	if s.auth = opts.Auth; s.auth == nil && opts.APIKey != "" {
		s.auth, _ = auth.New(context.Background(), auth.Options{APIKey: opts.APIKey}) // an API key alone cannot fail
	}
	if s.auth.Enabled() {
		e.Use(s.authenticate, s.limitUserRequests)
	}
	e.Use(s.auditCalls)
	e.Use(s.requireJSON)
	e.Use(s.limitBody)

	e.GET("/healthz", s.health)
	e.GET("/readyz", s.ready)
	s.host.mountDefaults()
	s.mountCapabilities()
	s.host.mountWires()
	return s
}

// mountCapabilities serves the endpoints the app's capabilities add under
// /threads/:id/ (capabilities.HTTPRoutes), such as the harness's
// /threads/:id/plan, with the runner as their capabilities.ThreadHost. They
// are mounted once, from the markers of the app the server starts with.
func (s *Server) mountCapabilities() {
	for _, mk := range s.runs.App().Config.Markers {
		if ar, ok := mk.(capabilities.AppRoutes); ok {
			for _, rt := range ar.AppRoutes(s.runs) {
				s.echo.Add(rt.Method, rt.Path, appRoute(rt.Handler))
				if rt.Method != http.MethodGet && rt.Method != http.MethodHead {
					s.audited[rt.Method+" "+rt.Path] = mk.Name()
				}
			}
		}
		hr, ok := mk.(capabilities.HTTPRoutes)
		if !ok {
			continue
		}
		for _, rt := range hr.ThreadRoutes(s.runs) {
			path := "/threads/:id/" + strings.TrimPrefix(rt.Path, "/")
			s.echo.Add(rt.Method, path, s.guardThread(path, threadRoute(rt), false))
			if rt.Method != http.MethodGet && rt.Method != http.MethodHead {
				s.audited[rt.Method+" "+path] = "signal"
			}
		}
	}
}

// threadRoute adapts a capability's endpoint to echo: the thread id is the
// request's "id" path value, and an *HTTPError is answered in the API's
// error format.
func threadRoute(rt capabilities.ThreadRoute) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		r.SetPathValue("id", c.Param("id"))
		return appRoute(rt.Handler)(c)
	}
}

// appRoute adapts a capability's handler to echo: an *HTTPError is
// answered in the API's error format.
func appRoute(h func(http.ResponseWriter, *http.Request) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := h(c.Response(), c.Request())
		var he *capabilities.HTTPError
		if errors.As(err, &he) {
			return newError(he.Status, he.Kind, he.Msg)
		}
		return err
	}
}

// Echo exposes the echo instance so the dev server can add pages.
func (s *Server) Echo() *echo.Echo { return s.echo }

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.logger.Error("handler panicked", "path", c.Request().URL.Path, "panic", r)
				err = newError(http.StatusInternalServerError, "internal", "internal error")
			}
		}()
		return next(c)
	}
}

// authenticate attaches the identity of each request's credential to its
// context (capabilities.WithIdentity), and answers 401 unauthorized, in the
// API's error format, to a request with none or a refused one. Probes
// (/healthz, /readyz) and CORS preflights send no credential and pass.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if p := req.URL.Path; p == "/healthz" || p == "/readyz" || req.Method == http.MethodOptions {
			return next(c)
		}
		id, err := s.auth.Authenticate(req)
		if err != nil {
			var ae *auth.Error
			if !errors.As(err, &ae) {
				return err
			}
			return newError(http.StatusUnauthorized, "unauthorized", ae.Msg)
		}
		c.SetRequest(req.WithContext(capabilities.WithIdentity(req.Context(), id)))
		return next(c)
	}
}

// requireJSON refuses a request that sends a body, or names a content
// type, other than JSON, with 415. Browsers send text/plain and form
// bodies from any site without asking first (no CORS preflight); refusing
// them keeps a page elsewhere from starting or cancelling runs. A request
// with no body and no Content-Type, such as a bare POST to cancel, passes.
func (s *Server) requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The check runs in a function of its own: a middleware's frame
		// stays on the stack while the handler runs, and a runs/wait
		// handler waits there on its model (see agent.RunWith).
		if err := checkJSON(c.Request()); err != nil {
			return err
		}
		return next(c)
	}
}

// checkJSON refuses a request with a body that is not JSON.
func checkJSON(req *http.Request) error {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	ct := req.Header.Get(echo.HeaderContentType)
	if ct == "" && (req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody) {
		return nil
	}
	if isJSON(ct) {
		return nil
	}
	got := "no Content-Type"
	if ct != "" {
		got = fmt.Sprintf("Content-Type %q", ct)
	}
	return newError(http.StatusUnsupportedMediaType, "unsupported_media_type",
		fmt.Sprintf("%s %s: send the body as JSON with Content-Type: application/json (got %s); with curl, add -H 'Content-Type: application/json'", req.Method, req.URL.Path, got))
}

// isJSON reports whether a Content-Type names JSON: application/json or a
// +json type, with any parameters.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// limitBody refuses bodies over the app's limit with 413, whether the size
// is announced or only discovered while reading, and gives the body
// HTTPLimits.BodyTimeout to arrive.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	timeout := s.opts.HTTP.WithDefaults().BodyTimeout
	return func(c echo.Context) error {
		// In a function of its own, as requireJSON's check.
		if err := s.bound(c, timeout); err != nil {
			return err
		}
		return next(c)
	}
}

// bound refuses a body declared larger than the app's limit, and bounds
// the body's size and the time to read it.
func (s *Server) bound(c echo.Context, timeout time.Duration) error {
	limit := s.runs.App().Config.Limits.WithDefaults().BodyBytes
	req := c.Request()
	if req.ContentLength > limit {
		return newError(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than the limit (limits.body_bytes in dawn.yaml)")
	}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = http.MaxBytesReader(c.Response(), deadlineBody(c.Response(), req.Body, timeout), limit)
	}
	return nil
}

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// readyProbeTimeout bounds the store query /readyz makes: a probe that
// waits longer than a load balancer's check is as good as a failure.
const readyProbeTimeout = 2 * time.Second

// ready answers /readyz: 200 when the store answers a cheap query and the
// server is not draining, 503 otherwise, so that a load balancer or
// Kubernetes sends new requests elsewhere while the database is cut off or
// runs finish after SIGTERM. /healthz stays 200 in both cases: the process
// is alive and must not be restarted for them.
func (s *Server) ready(c echo.Context) error {
	if s.runs.Draining() {
		ae := newError(http.StatusServiceUnavailable, "shutting_down", "the server is shutting down: runs in flight are finishing and new ones go to other replicas")
		ae.RetryAfter = 1
		return ae
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyProbeTimeout)
	defer cancel()
	// A thread id no thread has: the answer is ErrNotFound from a store
	// that answers, so the query touches one index and no rows.
	if _, err := s.runs.Store().GetThread(ctx, "readyz-probe"); err != nil && !errors.Is(err, store.ErrNotFound) {
		if !errors.Is(err, store.ErrUnavailable) {
			err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
