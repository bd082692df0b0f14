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
	// PendingSignal is a pause or cancel the run in flight has not reached
	// yet: it takes effect at the run's next step boundary.
	PendingSignal string `json:"pending_signal,omitempty"`
	BudgetLeft    int    `json:"budget_left"`
	*harness.Plan
}

func (s *Server) getPlan(c echo.Context) error {
	return s.writePlan(c, http.StatusOK)
}

func (s *Server) writePlan(c echo.Context, status int) error {
	id := c.Param("id")
	view, err := s.runs.PlanOf(c.Request().Context(), id)
	if err != nil {
		return planError(err)
	}
	var p harness.Plan
	if err := json.Unmarshal(view.Values["plan"], &p); err != nil {
		return newError(http.StatusInternalServerError, "internal", "the saved plan cannot be read: "+err.Error())
	}
	return c.JSON(status, planBody{ThreadID: id, RunInFlight: view.Running, PendingSignal: view.PendingSignal, BudgetLeft: p.BudgetLeft(), Plan: &p})
}

// How long a supervisor action waits for the run in flight to act on it
// before answering 202 with the action pending. A pause waits for the
// model call in progress to end, which can take minutes; a cancel
// interrupts it.
var superviseWait = map[string]time.Duration{"pause": time.Second, "cancel": 10 * time.Second}

// supervise handles POST /threads/:id/plan/pause, /resume and /cancel and
// answers with the plan as it is afterwards: 200 once the action is taken,
// 202 (with pending_signal) while the run in flight has not reached it.
func (s *Server) supervise(action string) echo.HandlerFunc {
	return func(c echo.Context) error {
		pending, err := s.runs.Supervise(c.Request().Context(), c.Param("id"), action, superviseWait[action])
		if err != nil {
			return planError(err)
		}
		if pending {
			return s.writePlan(c, http.StatusAccepted)
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
