package dawn

import (
	"errors"
	"net/http"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// webhookNotFound is the 404 of a run in c's path with no delivery.
func webhookNotFound(c echo.Context) error {
	return newError(http.StatusNotFound, "webhook_not_found", "there is no webhook delivery of run "+c.Param("run")+" on thread "+c.Param("id")+": the run asked for none, or its record was deleted (with its thread, or once it had ended longer ago than webhooks.keep in dawn.yaml, 7 days unless set)")
}

// webhookDelivery is GET /threads/:id/runs/:run/webhook: how the webhook
// of a run went (delivering, delivered, failed), as the store records it,
// so that every server on the store answers the same.
func (s *api) webhookDelivery(c echo.Context) error {
	id, runID := c.Param("id"), c.Param("run")
	d, err := s.host.WebhookDelivery(c.Request().Context(), runID)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && d.ThreadID != id):
		return webhookNotFound(c)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, d)
}
