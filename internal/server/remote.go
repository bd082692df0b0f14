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
// store: the signal goes to that replica, and unless ?wait=false the
// answer waits for the store to record the run's end.
func (s *Server) cancelRemote(c echo.Context, r store.Run) error {
	ctx := c.Request().Context()
	if c.QueryParam("wait") == "false" {
		if err := s.runs.SignalRemote(ctx, r, "cancel"); err != nil {
			return err
		}
		// Keep sending it for a while in the background, in case the
		// run's replica was reconnecting its listener.
		go func() {
			bg, cancel := context.WithTimeout(context.Background(), remoteCancelRetry)
			defer cancel()
			_, _ = s.runs.WaitRemote(bg, r, "cancel")
		}()
	} else if _, err := s.runs.WaitRemote(ctx, r, "cancel"); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cancelBody{ThreadID: r.ThreadID, Status: "interrupted"})
}

// followRemote streams the events of a run that is not in flight here
// (another replica has it, or it has ended) from the store, as they
// commit, a page at a time.
func (s *Server) followRemote(c echo.Context, runID string, after int64) error {
	f := s.runs.Follow(runID, after)
	defer f.Close()
	return s.writeStream(c, f, runID)
}
