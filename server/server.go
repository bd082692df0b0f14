package server

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"

	"github.com/dawn-go/dawn/runner"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Options configure a Server.
type Options struct {
	// APIKey, when set, is required as "Authorization: Bearer KEY" (or
	// "X-Api-Key: KEY", as the LangGraph SDK sends it) on every endpoint but
	// /healthz.
	APIKey string
	// CORSOrigins lists origins allowed to call the API from a browser;
	// empty turns CORS off.
	CORSOrigins []string
	// Env reads environment variables (for the model each route uses).
	Env    func(string) string
	Logger *slog.Logger
}

// Server is the HTTP API.
type Server struct {
	echo   *echo.Echo
	runs   *runner.Manager
	opts   Options
	logger *slog.Logger
	// lg remembers runs started in the LangGraph dialect.
	lg lgRuns
}

// New returns the API for the runs managed by m.
func New(m *runner.Manager, opts Options) *Server {
	s := &Server{echo: echo.New(), runs: m, opts: opts, logger: opts.Logger}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.recoverPanics)
	if len(opts.CORSOrigins) > 0 {
		e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
			AllowOrigins: opts.CORSOrigins,
			AllowHeaders: []string{"Authorization", "Content-Type", "Last-Event-ID", "X-Api-Key"},
			// A LangGraph client in a browser reads the run's id from
			// Content-Location (useStream keeps it to rejoin the run).
			ExposeHeaders: []string{"Content-Location", "Location", "Dawn-Run-Id", "X-Pagination-Next"},
		}))
	}
	if opts.APIKey != "" {
		e.Use(s.requireKey)
	}
	e.Use(s.limitBody)

	e.GET("/healthz", s.health)
	e.GET("/routes", s.listRoutes)
	e.POST("/threads", s.lgCreateThread)
	e.GET("/threads/:id", s.getThread)
	e.DELETE("/threads/:id", s.deleteThread)
	e.GET("/threads/:id/state", s.getState)
	e.GET("/threads/:id/runs", s.runsDialect)
	e.POST("/threads/:id/runs/wait", s.byDialect(s.runWait, s.lgRunWait))
	e.POST("/threads/:id/runs/stream", s.byDialect(s.runStream, s.lgRunStream))
	e.GET("/threads/:id/runs/:run/stream", s.lgJoinDialect)
	e.POST("/threads/:id/cancel", s.cancel)
	e.GET("/threads/:id/plan", s.getPlan)
	e.POST("/threads/:id/plan/pause", s.supervise("pause"))
	e.POST("/threads/:id/plan/resume", s.supervise("resume"))
	e.POST("/threads/:id/plan/cancel", s.supervise("cancel"))
	s.routeLangGraph(e)
	return s
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

func (s *Server) requireKey(next echo.HandlerFunc) echo.HandlerFunc {
	want := []byte("Bearer " + s.opts.APIKey)
	return func(c echo.Context) error {
		if c.Request().URL.Path == "/healthz" || c.Request().Method == http.MethodOptions {
			return next(c)
		}
		got := []byte(c.Request().Header.Get("Authorization"))
		if key := c.Request().Header.Get("X-Api-Key"); len(got) == 0 && key != "" {
			got = []byte("Bearer " + key) // the LangGraph SDK's header
		}
		if subtle.ConstantTimeCompare(got, want) != 1 {
			return newError(http.StatusUnauthorized, "unauthorized", "missing or wrong API key: send Authorization: Bearer <DAWN_API_KEY> (or X-Api-Key: <DAWN_API_KEY>)")
		}
		return next(c)
	}
}

// limitBody refuses bodies over the app's limit with 413, whether the size
// is announced or only discovered while reading.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit := s.runs.App().Config.Limits.WithDefaults().BodyBytes
		req := c.Request()
		if req.ContentLength > limit {
			return newError(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than the limit (limits.body_bytes in dawn.yaml)")
		}
		if req.Body != nil {
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		}
		return next(c)
	}
}

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) listRoutes(c echo.Context) error {
	return c.JSON(http.StatusOK, s.runs.App().Describe(s.env()))
}

func (s *Server) env() func(string) string {
	if s.opts.Env != nil {
		return s.opts.Env
	}
	return func(string) string { return "" }
}

func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
