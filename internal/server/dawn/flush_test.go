package dawn

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// subscriptions counts no reader of a run's events: the one method of
// wire.RunControl the stream calls.
type subscriptions struct{ wire.RunControl }

func (subscriptions) Subscribed() func() { return func() {} }

// flushCounter is a response writer that counts flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestWriteStreamFlushesBursts checks that events already there when the
// stream writes are sent together: one flush for the headers and one for
// the burst, not one per event (a server holding thousands of streams pays
// a write system call per flush). Every event still goes out, in order.
func TestWriteStreamFlushesBursts(t *testing.T) {
	s := &api{host: wire.Host{RunControl: subscriptions{}}}
	for _, tc := range []struct {
		name string
		src  func() wire.EventSource
	}{
		{"live", func() wire.EventSource {
			l := stream.NewLog()
			for range 10 {
				l.Publish(stream.Event{Type: "chunk", Data: []byte(`{"text":"x"}`)})
			}
			l.Publish(stream.Event{Type: stream.TypeDone, Data: []byte(`{}`)})
			l.Close()
			return l.Subscribe(0)
		}},
		{"replay", func() wire.EventSource {
			l := stream.NewLog()
			for range 10 {
				l.Publish(stream.Event{Type: "chunk", Data: []byte(`{"text":"x"}`)})
			}
			l.Publish(stream.Event{Type: stream.TypeDone, Data: []byte(`{}`)})
			return wire.Replay(l.Since(0))
		}},
	} {
		rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
		c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
		if err := s.writeStream(c, tc.src(), "run-1"); err != nil {
			t.Fatal(err)
		}
		body := rec.Body.String()
		if n := strings.Count(body, "event: chunk\n"); n != 10 || !strings.Contains(body, "event: done\n") || !strings.Contains(body, "id: 11\n") {
			t.Errorf("%s: the stream wrote %d chunks, want 10 then done (id 11):\n%s", tc.name, n, body)
		}
		if rec.flushes > 2 {
			t.Errorf("%s: 11 events already there took %d flushes, want 2 (headers, then the burst)", tc.name, rec.flushes)
		}
	}
}
