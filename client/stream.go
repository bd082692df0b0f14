package client

import (
	"io"
	"net/http"

	"github.com/dawn-go/dawn/stream"
)

// Stream is the live event stream of one run.
type Stream struct {
	// ThreadID is the run's thread.
	ThreadID string
	// RunID is the run's id, from the Dawn-Run-Id header.
	RunID string

	body   io.ReadCloser
	events *stream.Reader
	done   bool
}

func newStream(threadID string, resp *http.Response) *Stream {
	return &Stream{ThreadID: threadID, RunID: resp.Header.Get("Dawn-Run-Id"), body: resp.Body, events: stream.NewReader(resp.Body)}
}

// Next returns the run's next event. After the done event, and at the end
// of the stream, it returns io.EOF; a stream that ends before the done event
// returns io.ErrUnexpectedEOF, and Client.Rejoin picks it up again.
func (s *Stream) Next() (stream.Event, error) {
	if s.done {
		return stream.Event{}, io.EOF
	}
	e, err := s.events.Next()
	if err == io.EOF {
		return stream.Event{}, io.ErrUnexpectedEOF
	}
	if err != nil {
		return stream.Event{}, err
	}
	if e.Type == stream.TypeDone {
		s.done = true
	}
	return e, nil
}

// LastEventID is the id of the last event read, as Last-Event-ID carries it.
func (s *Stream) LastEventID() string { return s.events.LastID }

// Close ends the stream. The run goes on.
func (s *Stream) Close() error { return s.body.Close() }
