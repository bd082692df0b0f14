package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// forgetUser is DELETE /users/:id/data, for the service credential: it
// erases everything the user owns (runner.Manager.ForgetUser), stopping
// their runs in flight on any replica first, and answers 200 with what
// it erased by table. Forgetting a user with nothing left answers 200
// with zero counts.
func (s *Server) forgetUser(c echo.Context) error {
	if err := serviceOnly(c, "forget a user"); err != nil {
		return err
	}
	user := c.Param("id")
	if user == "" {
		return newError(http.StatusBadRequest, "invalid_input", "name the user to forget: DELETE /users/USER_ID/data")
	}
	f, err := s.runs.ForgetUser(c.Request().Context(), user)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, f)
}
