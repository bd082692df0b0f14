package devserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/server"
)

// proxyWait is how long a request waits for the app while it restarts.
const proxyWait = 10 * time.Second

// proxyBufferBytes caps the request body the proxy holds in memory. A body
// up to it is read whole before the request goes on, so it can be sent
// again to a restarted child; a larger one streams and cannot be.
const proxyBufferBytes = 8 << 20

// devProxy serves the dev port for an app that runs as a child process: it
// forwards each request to the child serving now, and while none is (the
// app is building or restarting) holds the request until one is, for up to
// proxyWait. A request that the child it went to could not answer because
// that child was being replaced is sent again to the next one.
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
		Transport:     &childTransport{p: p, base: http.DefaultTransport.(*http.Transport).Clone()},
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

// childTransport sends requests to the child they were addressed to, and
// sends a request again to the next child when the one it went to was
// replaced before answering it: the request failed (the child closed its
// connections) or got 503 (the child was shutting down), and the proxy
// has stopped using that child since.
type childTransport struct {
	p    *devProxy
	base http.RoundTripper
}

// maxResends bounds how many children one request is sent to.
const maxResends = 3

func (t *childTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for resends := 0; ; resends++ {
		resp, err := t.base.RoundTrip(req)
		if (err == nil && resp.StatusCode != http.StatusServiceUnavailable) || resends == maxResends ||
			!t.p.replaced(req.URL) || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		next := t.p.current(req.Context())
		if next == nil {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		again := req.Clone(req.Context())
		again.URL.Scheme, again.URL.Host = next.Scheme, next.Host
		if req.Body != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		req = again
	}
}

// replaced reports whether the proxy no longer sends requests to the child
// at u: it was cleared or replaced.
func (p *devProxy) replaced(u *url.URL) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target == nil || p.target.Host != u.Host
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
	if err := bufferBody(w, r); err != nil {
		switch {
		case r.Context().Err() != nil: // the client went away
		case errors.Is(err, os.ErrDeadlineExceeded):
			writeProxyError(w, http.StatusRequestTimeout, "body_timeout", "the request body did not arrive within "+server.DefaultBodyTimeout.String())
		default:
			writeProxyError(w, http.StatusBadRequest, "invalid_body", "cannot read request body: "+err.Error())
		}
		return
	}
	u := p.current(r.Context())
	if u == nil {
		if r.Context().Err() == nil {
			writeRestarting(w, http.StatusServiceUnavailable, "the app is not running yet: it is building, restarting, or its last build failed; see the dev server output and save a fix")
		}
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, u)))
}

// bufferBody reads r's body into memory, when it is at most
// proxyBufferBytes, and makes it one the transport can read again. Besides
// resending, this keeps the transport from reading the client's body after
// the response has begun: the server closes an unread request body once
// the response starts, and the transport's last read of it (to check its
// length) then fails and closes the connection to the child, cutting the
// response (golang/go#40747). A larger body streams, in full duplex so the
// server leaves it open. The body gets the API's default body timeout.
func bufferBody(w http.ResponseWriter, r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(server.DefaultBodyTimeout))
	defer rc.SetReadDeadline(time.Time{})
	data, err := io.ReadAll(io.LimitReader(r.Body, proxyBufferBytes+1))
	if err != nil {
		return err
	}
	if len(data) > proxyBufferBytes {
		_ = rc.EnableFullDuplex()
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	r.TransferEncoding = nil
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return nil
}

// writeRestarting writes the API's JSON error with kind "restarting".
func writeRestarting(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Retry-After", "1")
	writeProxyError(w, status, "restarting", msg)
}

// writeProxyError writes the API's JSON error.
func writeProxyError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"kind": kind, "message": msg}})
}
