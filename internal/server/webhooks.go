package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// webhookDelivery is GET /threads/:id/runs/:run/webhook: how the webhook
// of a run went (delivering, delivered, failed), as this server remembers
// it. The record lives in memory: a restart, or another replica, does not
// know it, and the server log keeps every delivery's outcome.
// webhookNotFound is the 404 of a run in c's path with no delivery here.
func webhookNotFound(c echo.Context) error {
	return newError(http.StatusNotFound, "webhook_not_found", "this server has no webhook delivery of run "+c.Param("run")+" on thread "+c.Param("id")+": the run asked for none, ran on another server, or ran before this server started")
}

func (s *Server) webhookDelivery(c echo.Context) error {
	id, runID := c.Param("id"), c.Param("run")
	d, ok := s.runs.WebhookDelivery(runID)
	if !ok || d.ThreadID != id {
		return webhookNotFound(c)
	}
	return c.JSON(http.StatusOK, d)
}
