package server

import (
	"context"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// remoteCancelRetry is how long a cancel with ?wait=false is sent again
// for, while the run still runs.
const remoteCancelRetry = 30 * time.Second

// cancelRemote cancels run r, which runs on another replica of a shared
// store, and answers as Dawn's cancel does.
func (s *Server) cancelRemote(c echo.Context, r store.Run) error {
	if err := s.stopRemote(c.Request().Context(), r, c.QueryParam("wait") != "false", "cancel"); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cancelBody{ThreadID: r.ThreadID, Status: "interrupted"})
}

// stopRemote stops run r, which runs on another replica of a shared store:
// the signal action ("cancel", or "rollback" to discard its steps too)
// goes to that replica (the one Dawn's cancel, the LangGraph cancel and
// multitask_strategy "interrupt" all send). With wait
// it returns once the store records the run's end; without, it returns at
// once and keeps sending the signal in the background for a while, in case
// the run's replica was reconnecting its listener.
func (s *Server) stopRemote(ctx context.Context, r store.Run, wait bool, action string) error {
	if wait {
		_, err := s.runs.WaitRemote(ctx, r, action)
		return err
	}
	if err := s.runs.SignalRemote(ctx, r, action); err != nil {
		return err
	}
	go func() {
		bg, cancel := context.WithTimeout(context.Background(), remoteCancelRetry)
		defer cancel()
		_, _ = s.runs.WaitRemote(bg, r, action)
	}()
	return nil
}

// followRemote streams the events of a run that is not in flight here
// (another replica has it, or it has ended) from the store, as they
// commit, a page at a time.
func (s *Server) followRemote(c echo.Context, runID string, after int64) error {
	f := s.runs.Follow(runID, after)
	defer f.Close()
	return s.writeStream(c, f, runID)
}
