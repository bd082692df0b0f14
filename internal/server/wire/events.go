package wire

import (
	"context"
	"io"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// KeepAlive is how long a stream waits for an event before it writes a
// keep-alive comment.
const KeepAlive = 15 * time.Second

// EventSource is a run's events as a stream reads them: a live log
// (stream.Subscription), the store (runner.Follower), or a replay.
type EventSource interface {
	// Next returns the next event, waiting as long as ctx allows; io.EOF
	// after the last.
	Next(ctx context.Context) (stream.Event, error)
}

// Replay is an EventSource of events already read.
func Replay(events []stream.Event) EventSource { return &replay{events: events} }

type replay struct{ events []stream.Event }

// Ready reports that the next event (or the end) is at hand, as
// stream.Subscription.Ready does.
func (s *replay) Ready() bool { return true }

func (s *replay) Next(context.Context) (stream.Event, error) {
	if len(s.events) == 0 {
		return stream.Event{}, io.EOF
	}
	e := s.events[0]
	s.events = s.events[1:]
	return e, nil
}

// StartSSE writes the headers of a server-sent event stream of run runID,
// without the status line.
func StartSSE(c echo.Context, runID string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	if runID != "" {
		h.Set("Dawn-Run-Id", runID)
	}
}
