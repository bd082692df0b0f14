package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/runner"
	"github.com/labstack/echo/v4"
)

// planBody is GET /threads/:id/plan: the harness-owned plan with what a
// supervisor needs to decide.
type planBody struct {
	ThreadID    string `json:"thread_id"`
	RunInFlight bool   `json:"run_in_flight"`
	BudgetLeft  int    `json:"budget_left"`
	*harness.Plan
}

func (s *Server) getPlan(c echo.Context) error {
	id := c.Param("id")
	values, running, err := s.runs.PlanOf(c.Request().Context(), id)
	if err != nil {
		return planError(err)
	}
	var p harness.Plan
	if err := json.Unmarshal(values["plan"], &p); err != nil {
		return newError(http.StatusInternalServerError, "internal", "the saved plan cannot be read: "+err.Error())
	}
	return c.JSON(http.StatusOK, planBody{ThreadID: id, RunInFlight: running, BudgetLeft: p.BudgetLeft(), Plan: &p})
}

// supervise handles POST /threads/:id/plan/pause, /resume and /cancel and
// answers with the plan as it is afterwards.
func (s *Server) supervise(action string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.runs.Supervise(c.Request().Context(), c.Param("id"), action, 30*time.Second); err != nil {
			return planError(err)
		}
		return s.getPlan(c)
	}
}

func planError(err error) error {
	var se *runner.SignalError
	switch {
	case errors.Is(err, runner.ErrNoPlan):
		return newError(http.StatusNotFound, "plan_not_found", err.Error())
	case errors.As(err, &se):
		return newError(http.StatusConflict, "plan_state", err.Error())
	}
	return err
}
