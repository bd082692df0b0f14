package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/router"
	"github.com/labstack/echo/v4"
)

// apiError is the API's error (wire.Error): an HTTP status and a
// machine-readable kind.
type apiError = wire.Error

func newError(status int, kind, msg string) *apiError {
	return wire.NewError(status, kind, msg)
}

// storeRetryAfter is the Retry-After, in seconds, of a store_unavailable
// answer: about as long as a database failover takes to begin answering.
const storeRetryAfter = 5

// classify maps any error to a status and kind. Internal errors never leak
// Go stack traces; their message is kept short.
func classify(err error) *apiError {
	var ae *apiError
	var he *echo.HTTPError
	var inputErr *runner.InputError
	var modelErr *runner.ModelError
	var unavailable *runner.ModelUnavailableError
	var nf *router.NotFoundError
	var broken *app.BrokenRouteError
	var pending *runner.InterruptPendingError
	var resumeErr *runner.ResumeError
	var overrideErr *runner.OverrideError
	var quota *store.QuotaError
	switch {
	case errors.As(err, &quota):
		return quotaError(quota.Error(), quota.What)
	case errors.As(err, &overrideErr):
		return newError(http.StatusBadRequest, "invalid_override", err.Error())
	case errors.As(err, &pending):
		return newError(http.StatusConflict, "interrupt_pending", err.Error())
	case errors.As(err, &resumeErr):
		return newError(http.StatusBadRequest, "invalid_resume", err.Error())
	case errors.Is(err, runner.ErrNoInterruptPending):
		return newError(http.StatusConflict, "no_interrupt_pending", err.Error())
	case errors.As(err, &broken):
		return newError(http.StatusServiceUnavailable, "route_broken", err.Error())
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, store.ErrEmbed):
		// The provider's words name its address: they go to the log.
		return newError(http.StatusBadGateway, "embedding_failed", "the Store's embedding model (store.index.embed in dawn.yaml) failed, so nothing was written or searched; try again shortly, and see the server's log for why")
	case errors.Is(err, store.ErrUnavailable):
		// The driver's words name the database's host, user and name:
		// they go to the log (handleError), not to the client.
		ae := newError(http.StatusServiceUnavailable, "store_unavailable", "the store is unavailable: its database cannot be reached or cannot write; try again shortly")
		ae.RetryAfter = storeRetryAfter
		return ae
	case errors.Is(err, router.ErrInvalidPath):
		return newError(http.StatusBadRequest, "invalid_route", err.Error())
	case errors.As(err, &nf):
		return newError(http.StatusNotFound, "route_not_found", err.Error())
	case errors.Is(err, runner.ErrBusy):
		return newError(http.StatusConflict, "run_in_flight", err.Error())
	case errors.Is(err, runner.ErrOverloaded):
		ae := newError(http.StatusServiceUnavailable, "overloaded", err.Error())
		ae.RetryAfter = 1
		return ae
	case errors.Is(err, runner.ErrShuttingDown):
		return newError(http.StatusServiceUnavailable, "shutting_down", err.Error())
	case errors.As(err, &inputErr):
		return newError(http.StatusBadRequest, "invalid_input", err.Error())
	case errors.As(err, &unavailable):
		// The server runs; its configuration lacks what this model needs.
		return newError(http.StatusServiceUnavailable, "model_unavailable", err.Error())
	case errors.As(err, &modelErr):
		return newError(http.StatusBadGateway, "model_error", err.Error())
	case errors.Is(err, store.ErrNotFound):
		return newError(http.StatusNotFound, "thread_not_found", err.Error())
	case errors.Is(err, store.ErrInvalid):
		return newError(http.StatusBadRequest, "invalid_input", err.Error())
	case errors.Is(err, store.ErrBusy):
		return newError(http.StatusConflict, "run_in_flight", err.Error())
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusRequestEntityTooLarge:
			return newError(he.Code, "body_too_large", "request body is larger than the limit (limits.body_bytes in dawn.yaml)")
		case http.StatusNotFound:
			return newError(he.Code, "not_found", "no such endpoint")
		case http.StatusMethodNotAllowed:
			return newError(he.Code, "method_not_allowed", "method not allowed on this endpoint")
		case http.StatusUnauthorized:
			return newError(he.Code, "unauthorized", "missing or wrong API key: send Authorization: Bearer <DAWN_API_KEY>")
		}
		return newError(he.Code, "http_error", http.StatusText(he.Code))
	}
	return newError(http.StatusInternalServerError, "internal", err.Error())
}

// quotaError is the 429 of a user at one of their limits.per_user, msg
// saying which.
func quotaError(msg, what string) *apiError {
	return newError(http.StatusTooManyRequests, "quota_exceeded", msg+": limits.per_user."+what+" in dawn.yaml sets the limit; free some, or raise it")
}

func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := classify(err)
	if ae.Status >= 500 && (ae.Kind == "internal" || ae.Kind == "store_unavailable" || ae.Kind == "embedding_failed") {
		s.logger.Error("request failed", "method", c.Request().Method, "path", c.Path(), "err", err)
	}
	if ae.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	var body wire.ErrorBody
	body.Error.Kind, body.Error.Message, body.Error.Details.Code = ae.Kind, ae.Msg, ae.Kind
	_ = c.JSON(ae.Status, wire.Shaped(c, body))
}
