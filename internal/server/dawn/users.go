package dawn

import (
	"errors"
	"net/http"

	"github.com/dawn-go/dawn/internal/runs"
	"github.com/labstack/echo/v4"
)

// forgetUser is DELETE /users/:id/data, for the service credential: it
// erases everything the user owns (runner.Manager.ForgetUser), stopping
// their runs in flight on any replica first, and answers 200 with what
// it erased by table. Forgetting a user with nothing left answers 200
// with zero counts.
func (s *api) forgetUser(c echo.Context) error {
	if err := s.serviceOnly(c, "forget a user"); err != nil {
		return err
	}
	user := c.Param("id")
	if user == "" {
		return newError(http.StatusBadRequest, "invalid_input", "name the user to forget: DELETE /users/USER_ID/data")
	}
	f, err := s.host.ForgetUser(c.Request().Context(), user)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, f)
}

// serviceOnly refuses a user with 403: only the service credential (or
// anyone, on a server without authentication) may call the endpoint,
// which does what (runs.Service.ServiceOnly).
func (s *api) serviceOnly(c echo.Context, what string) error {
	err := s.host.ServiceOnly(c.Request().Context())
	if errors.Is(err, runs.ErrServiceOnly) {
		return newError(http.StatusForbidden, "forbidden", "only the service credential (DAWN_API_KEY) may "+what)
	}
	return err
}
