package dawn

import (
	"errors"
	"net/http"

	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// listApprovals answers GET /approvals: the remembered decisions the
// caller may see (runs.Service.Decisions): a user their own and the
// whole app's, the service credential (or anyone without
// authentication) every one.
func (s *api) listApprovals(c echo.Context) error {
	out, err := s.host.Decisions(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"approvals": out})
}

// revokeApproval answers DELETE /approvals/:key?user=U: it forgets a
// remembered decision, so the next call asks again. A user revokes their
// own (user= is theirs or left out); the service credential any user's,
// or the whole app's without user=. 404 when there is no such decision.
func (s *api) revokeApproval(c echo.Context) error {
	key := c.Param("key")
	user, err := s.host.RevokeDecision(c.Request().Context(), c.QueryParam("user"), key)
	switch {
	case errors.Is(err, runs.ErrOthersDecision):
		return newError(http.StatusNotFound, "approval_not_found", "no remembered decision "+key+" of yours")
	case errors.Is(err, store.ErrNotFound):
		return newError(http.StatusNotFound, "approval_not_found", "no remembered decision "+key+" for "+whose(user)+"; GET /approvals lists them")
	case err != nil:
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// whose names the owner of a remembered decision in messages.
func whose(user string) string {
	if user == "" {
		return "the whole app"
	}
	return "user " + user
}
