package wire

import (
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/labstack/echo/v4"
)

// notFoundKey holds the NotFoundAs function of a request.
const notFoundKey = "dawn.wire.notFound"

// NotFoundAs returns route middleware that makes the route answer a
// thread the caller may not see (another user's) with notFound(c), the
// answer its handler gives when the thread in the path does not exist,
// where that is not the store's: the two must read the same, or the
// answer tells that the thread exists.
func NotFoundAs(notFound func(c echo.Context) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(notFoundKey, notFound)
			return next(c)
		}
	}
}

// ThreadNotFound is the answer of the request's route to a thread in its
// path (the "id" parameter) that the caller may not see: the route's
// NotFoundAs, or the store's answer for a missing thread.
func ThreadNotFound(c echo.Context) error {
	if fn, ok := c.Get(notFoundKey).(func(echo.Context) error); ok {
		return fn(c)
	}
	return MissingThread(c.Param("id"))
}

// MissingThread is the store's answer for a thread that does not exist,
// word for word.
func MissingThread(id string) error { return runs.MissingThread(id) }
