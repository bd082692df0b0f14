package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// The owner checks of threads, runs, crons and items are the runs
// service's (internal/runs): every read the host offers the wires answers
// a thread the caller may not see exactly as a thread that does not
// exist. guardThread puts the same check in front of every handler whose
// path names a thread.

// guardThread puts the owner check in front of h when path names a
// thread (":id" after "/threads/"): another user's thread answers as a
// missing one before h reads anything (wire.ThreadNotFound: a route
// whose handler answers a missing thread in its own words says so with
// wire.NotFoundAs), and a missing thread is left to h (a run creates it).
// Every handler of the server is registered through it (handle,
// mountWires, mountCapabilities), inside the route's own middleware, so
// that the answer has the wire's error shape.
//
// A wire's handler (checked true) reads every thread through the host,
// which answers another user's thread as a missing one; it also checks a
// request's body and headers before it reads the thread, and answers a
// bad one with a 400 whether the thread exists or not. So a request to
// it that carries input (a body, or a Last-Event-ID) goes on to h for
// another user's thread too: its bad input gets the 400 a missing
// thread's gets, word for word, and good input the host's not-found.
func (s *Server) guardThread(path string, h echo.HandlerFunc, checked bool) echo.HandlerFunc {
	if path != "/threads/:id" && !strings.HasPrefix(path, "/threads/:id/") {
		return h
	}
	return func(c echo.Context) error {
		err := s.svc.NotOthers(c.Request().Context(), c.Param("id"))
		if errors.Is(err, store.ErrNotFound) {
			if checked && carriesInput(c.Request()) {
				return h(c)
			}
			return wire.ThreadNotFound(c)
		}
		if err != nil {
			return err
		}
		return h(c)
	}
}

// carriesInput reports whether r has a body or a Last-Event-ID for its
// handler to check.
func carriesInput(r *http.Request) bool {
	return r.ContentLength != 0 || r.Header.Get("Last-Event-ID") != ""
}
