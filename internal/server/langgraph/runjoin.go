package langgraph

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// joinRunByID is GET /runs/:run/stream: a run's stream named by the run
// alone (the SDK's runs.joinStream with no thread), as GET
// /threads/:id/runs/:run/stream streams it, with the same query. A run
// the caller cannot see, or a stateless run whose thread was deleted
// when it ended, is not found.
func (s *dialect) joinRunByID(c echo.Context) error {
	runID := c.Param("run")
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if errors.Is(err, store.ErrNotFound) {
		return wire.NewError(http.StatusNotFound, "run_not_found", "Run not found: no run "+strconv.Quote(runID)+"; a stateless run can be joined until it ends")
	}
	if err != nil {
		return err
	}
	c.SetParamNames("id", "run")
	c.SetParamValues(r.ThreadID, r.ID)
	return s.lgJoinStream(c)
}
