package a2a

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// keepAliveEvery is how often an idle stream gets a keep-alive comment
// (a time.Duration), so that proxies do not close it while a long model
// call writes nothing. Tests shorten it while streams of other tests may
// still read it, hence atomic.
var keepAliveEvery atomic.Int64

func init() { keepAliveEvery.Store(int64(wire.KeepAlive)) }

// keepAliveWriter is a ResponseWriter that, once its response is an
// event stream, writes a keep-alive comment when no write came for a
// tick: between events, never inside one (an event is written as an id
// line and then its data lines, in separate writes).
type keepAliveWriter struct {
	http.ResponseWriter
	mu sync.Mutex
	// stream says the response is an event stream under way.
	stream bool
	// mid says the last write left an event open.
	mid bool
	// wrote says something was written since the last tick.
	wrote bool
}

func (w *keepAliveWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stream = code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	w.ResponseWriter.WriteHeader(code)
}

func (w *keepAliveWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.ResponseWriter.Write(p)
	if len(p) > 0 {
		w.mid, w.wrote = !bytes.HasSuffix(p, []byte("\n\n")), true
	}
	return n, err
}

func (w *keepAliveWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// tick writes a keep-alive comment when the stream was idle since the
// last tick.
func (w *keepAliveWriter) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stream && !w.mid && !w.wrote {
		if _, err := w.ResponseWriter.Write([]byte(": keep-alive\n\n")); err == nil {
			if f, ok := w.ResponseWriter.(http.Flusher); ok {
				f.Flush()
			}
		}
	}
	w.wrote = false
}

// serveKeptAlive serves h with w kept alive while h runs.
func serveKeptAlive(h http.Handler, w http.ResponseWriter, r *http.Request) {
	kw := &keepAliveWriter{ResponseWriter: w}
	done := make(chan struct{})
	defer func() {
		// No comment may follow the handler's last write.
		kw.mu.Lock()
		kw.stream = false
		kw.mu.Unlock()
		close(done)
	}()
	go func() {
		t := time.NewTicker(time.Duration(keepAliveEvery.Load()))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				kw.tick()
			}
		}
	}()
	h.ServeHTTP(kw, r)
}
