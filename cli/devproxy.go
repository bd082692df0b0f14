package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// proxyWait is how long a request waits for the app while it restarts.
const proxyWait = 10 * time.Second

// devProxy serves the dev port for an app that runs as a child process: it
// forwards each request to the child serving now, and while none is (the
// app is building or restarting) holds the request until one is, for up to
// proxyWait.
type devProxy struct {
	wait time.Duration
	rp   *httputil.ReverseProxy

	mu      sync.Mutex
	target  *url.URL
	ready   chan struct{} // closed while target is set
	closing bool
}

type targetKey struct{}

func newDevProxy() *devProxy {
	p := &devProxy{wait: proxyWait, ready: make(chan struct{})}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(r.In.Context().Value(targetKey{}).(*url.URL))
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1, // pass SSE events on as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away
			}
			writeRestarting(w, http.StatusBadGateway, "the app stopped while handling this request (it is restarting or crashed; see the dev server output): "+err.Error())
		},
	}
	return p
}

// set makes u the child that serves requests; requests waiting go to it.
func (p *devProxy) set(u *url.URL) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = u
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// clear makes requests wait: the child is going away.
func (p *devProxy) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = nil
	select {
	case <-p.ready:
		p.ready = make(chan struct{})
	default:
	}
}

// close makes every request, waiting or new, fail at once.
func (p *devProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closing = true
	p.target = nil
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// current returns the child serving, waiting for one while there is none.
func (p *devProxy) current(ctx context.Context) *url.URL {
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		u, ready, closing := p.target, p.ready, p.closing
		p.mu.Unlock()
		if u != nil || closing {
			return u
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return nil
		}
	}
}

func (p *devProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u := p.current(r.Context())
	if u == nil {
		if r.Context().Err() == nil {
			writeRestarting(w, http.StatusServiceUnavailable, "the app is not running yet: it is building, restarting, or its last build failed; see the dev server output and save a fix")
		}
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, u)))
}

// writeRestarting writes the API's JSON error with kind "restarting".
func writeRestarting(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"kind": "restarting", "message": msg}})
}
