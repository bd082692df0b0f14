package langgraph

import (
	"net/http"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// This file holds the dialect's errors: LangGraph's "detail" beside
// Dawn's error body, the calls Dawn does not serve, and a missing thread.

// lgError is Dawn's error body with the message repeated as "detail",
// where LangGraph's clients read the Agent Server's {"detail": …}.
type lgError struct {
	wire.ErrorBody
	Detail string `json:"detail,omitempty"`
}

// markLG marks the requests of a handler as LangGraph-dialect ones: their
// errors carry LangGraph's "detail" too.
var markLG = wire.ShapeErrors(func(b wire.ErrorBody) any {
	return lgError{ErrorBody: b, Detail: b.Error.Message}
})

// unsupported answers a LangGraph call Dawn does not serve with 405 and
// why (405, not 501: the SDK retries a 5xx).
func unsupported(why string) echo.HandlerFunc {
	return func(c echo.Context) error {
		return wire.NewError(http.StatusMethodNotAllowed, "not_supported", c.Request().Method+" "+c.Path()+" is not supported: "+why)
	}
}

// addUnsupported mounts an unsupported call on a thread: its answer is
// the same whether the thread is the caller's, another user's or none
// (wire.NotFoundAs), so that it tells nothing of whose the thread is.
func addUnsupported(h wire.Mux, method, path, why string) {
	u := unsupported(why)
	h.Add(method, path, u, markLG, wire.NotFoundAs(u))
}

// startLG starts a LangGraph run on its thread: it applies if_not_exists,
// noThread is the 404 of a run request on a thread that does not exist
// and is not to be created.
func noThread(id string) error {
	return wire.NewError(http.StatusNotFound, "thread_not_found", "thread "+id+" does not exist: create it with POST /threads, or pass if_not_exists: \"create\"")
}
