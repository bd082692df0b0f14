package langgraph

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// This file cancels and rolls back runs.

// lgCancelRun is POST /threads/:id/runs/:run/cancel?wait=0|1&action=interrupt.
func (s *dialect) lgCancelRun(c echo.Context) error {
	r, err := s.threadRun(c)
	if err != nil {
		return err
	}
	switch c.QueryParam("action") {
	case "", "interrupt", "rollback":
	default:
		return wire.BadBody("action must be interrupt or rollback, not " + strconv.Quote(c.QueryParam("action")))
	}
	if r.Status == store.RunPending {
		// Queued: it leaves the queue and never runs.
		err := s.host.Dequeue(c.Request().Context(), r.ID)
		if !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return err
			}
			return s.answerRun(c, r.ThreadID, r.ID)
		}
		// It started meanwhile: cancel it as a running run.
	}
	wait := c.QueryParam("wait") == "1" || c.QueryParam("wait") == "true"
	if c.QueryParam("action") == "rollback" {
		return s.rollbackRun(c, r, wait)
	}
	live := s.host.Active(c.Request().Context(), r.ThreadID)
	if live == nil || live.ID != r.ID {
		// Another replica of a shared store may have it.
		remote, ok := s.host.RemoteRun(c.Request().Context(), r.ThreadID)
		if !ok || remote.ID != r.ID {
			return wire.NewError(http.StatusConflict, "run_not_running", "run "+r.ID+" is "+lgStatus(r)+", not running: there is nothing to cancel")
		}
		if err := s.host.StopRemote(c.Request().Context(), remote, wait); err != nil {
			return err
		}
		return s.answerRun(c, r.ThreadID, r.ID)
	}
	s.host.Cancel(c.Request().Context(), r.ThreadID)
	if wait {
		select {
		case <-live.Done():
		case <-c.Request().Context().Done():
			return nil
		}
	}
	return s.answerRun(c, r.ThreadID, r.ID)
}

// rollbackRun is a cancel with action=rollback: the run stops and is
// deleted with every step it saved. It answers with the run as it ended,
// which can no longer be read.
func (s *dialect) rollbackRun(c echo.Context, r store.Run, wait bool) error {
	reached, err := s.host.RollbackRun(c.Request().Context(), r, wait)
	switch {
	case err != nil:
		if c.Request().Context().Err() != nil {
			return nil
		}
		return err
	case !reached:
		return wire.NewError(http.StatusConflict, "run_not_running", "run "+r.ID+" is "+lgStatus(r)+", not running: there is nothing to roll back")
	}
	r.Status = store.RunCancelled
	setRunHeaders(c, r.ThreadID, r.ID)
	return c.JSON(http.StatusOK, s.runObject(r))
}
