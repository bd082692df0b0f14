package dawn

import (
	"net/http"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// cancelRemote cancels run r, which runs on another replica of a shared
// store, and answers as Dawn's cancel does.
func (s *api) cancelRemote(c echo.Context, r store.Run) error {
	if err := s.host.StopRemote(c.Request().Context(), r, c.QueryParam("wait") != "false"); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cancelBody{ThreadID: r.ThreadID, Status: "interrupted"})
}

// followRemote streams the events of a run that is not in flight here
// (another replica has it, or it has ended) from the store, as they
// commit, a page at a time.
func (s *api) followRemote(c echo.Context, runID string, after int64) error {
	f := s.host.Follow(runID, after)
	defer f.Close()
	return s.writeStream(c, f, runID)
}
