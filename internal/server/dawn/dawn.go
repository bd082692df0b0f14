package dawn

import (
	"net/http"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// api serves Dawn's wire on a wire.Host.
type api struct {
	host wire.Host
}

// Mount mounts Dawn's endpoints on h, as the default handlers of their
// paths (wire.Mux's Default), and exposes Dawn-Run-Id, which a page needs
// to rejoin a stream, to browsers.
func Mount(h wire.Host) {
	s := &api{host: h}
	h.Expose("Dawn-Run-Id")
	h.Default(http.MethodGet, "/routes", s.listRoutes)
	h.Default(http.MethodPost, "/threads", s.createThread)
	h.Default(http.MethodDelete, "/threads/:id", s.deleteThread)
	h.Default(http.MethodGet, "/threads/:id/runs", s.listRuns)
	h.Default(http.MethodPost, "/threads/:id/runs/wait", s.runWait)
	h.Default(http.MethodPost, "/threads/:id/runs/stream", s.runStream)
	h.Default(http.MethodGet, "/threads/:id/runs/:run/stream", s.joinStream, wire.NotFoundAs(runNotFoundOf))
	h.Default(http.MethodGet, "/threads/:id/runs/:run/webhook", s.webhookDelivery, wire.NotFoundAs(webhookNotFound))
	h.Default(http.MethodPost, "/threads/:id/cancel", s.cancel)
	h.Default(http.MethodPost, "/threads/:id/resume", s.resume)
	h.Default(http.MethodGet, "/audit", s.listAudit)
	h.Default(http.MethodDelete, "/users/:id/data", s.forgetUser)
	h.Default(http.MethodGet, "/approvals", s.listApprovals)
	h.Default(http.MethodDelete, "/approvals/:key", s.revokeApproval)
}

// newError is the API's error (wire.Error) of status, kind and msg.
func newError(status int, kind, msg string) *wire.Error {
	return wire.NewError(status, kind, msg)
}

// listRoutes is GET /routes: the app's routes, as the app describes them
// with the server's environment.
func (s *api) listRoutes(c echo.Context) error {
	return c.JSON(http.StatusOK, s.host.App().Describe(s.host.Env))
}
