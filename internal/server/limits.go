package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"
)

// HTTPLimits bound what one client can hold on the server: how long it may
// take to send a request, how big its headers may be, and how many
// connections may be open at once. Zero fields take the defaults, which
// are safe for a server reachable from the internet. No limit bounds how
// long a response takes, so a stream lasts as long as its run.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers (default 10s).
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from when the API
	// starts handling it (default 30s). A body not in by then gets 408
	// body_timeout and its connection is closed.
	BodyTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection may wait for its
	// next request (default 2m).
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's headers (default 64 KiB); more gets
	// 431.
	MaxHeaderBytes int
	// MaxConns caps the connections open at once (default 4096); more wait
	// to be accepted until one closes.
	MaxConns int
}

// Defaults for HTTPLimits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 4096
)

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l HTTPLimits) WithDefaults() HTTPLimits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}

// Server returns an http.Server for h with l's header timeout, idle
// timeout and header cap. It sets no ReadTimeout or WriteTimeout, which
// would cut streams; the body timeout is applied per request by the API.
func (l HTTPLimits) Server(h http.Handler) *http.Server {
	l = l.WithDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// Listener caps ln at l.MaxConns connections open at once.
func (l HTTPLimits) Listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, l.WithDefaults().MaxConns)
}

// HTTPLimits returns the limits s was made with, defaults filled in: serve
// s with their Server and Listener.
func (s *Server) HTTPLimits() HTTPLimits { return s.opts.HTTP.WithDefaults() }

// deadlineBody gives body until timeout from now to be read to its end: it
// sets the connection's read deadline, and lifts it once the body is in, so
// the rest of the exchange (a stream, say) is not cut by it. (net/http also
// lifts it then, when it starts watching the connection for the client
// going away.)
func deadlineBody(w http.ResponseWriter, body io.ReadCloser, timeout time.Duration) io.ReadCloser {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return body // a writer without deadlines (a test recorder)
	}
	return &timedBody{ReadCloser: body, rc: rc, timeout: timeout}
}

type timedBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	once    sync.Once
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.clear()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: the body was not in %s after the request started (server limit; send it faster)", wire.ErrBodyTimeout, b.timeout)
	}
	return n, err
}

// clear lifts the read deadline once the body is in. A body the handler
// leaves unread keeps it, which bounds the server's discarding of the rest.
func (b *timedBody) clear() {
	b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
}

// userRequests counts each user's requests in flight.
type userRequests struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts one more request of user, unless user already has limit
// in flight; it reports whether it did.
func (u *userRequests) acquire(user string, limit int) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user] >= limit {
		return false
	}
	if u.n == nil {
		u.n = map[string]int{}
	}
	u.n[user]++
	return true
}

// release counts one request of user less.
func (u *userRequests) release(user string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user]--; u.n[user] <= 0 {
		delete(u.n, user)
	}
}

// limitUserRequests gives each user a fair share of the server's
// connections: a user with limits.per_user.connections requests in
// flight (streams included) gets 429 quota_exceeded for one more, while
// other users go on. The service credential is not bounded by it.
func (s *Server) limitUserRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		user, scoped := ownership.Owner(c.Request().Context())
		if !scoped {
			return next(c)
		}
		limit := s.runs.App().Config.Limits.WithDefaults().PerUser.Connections
		if !s.inFlight.acquire(user, limit) {
			return quotaError(fmt.Sprintf("user %q has %d requests in flight, the most one user may have", user, limit), "connections")
		}
		defer s.inFlight.release(user)
		return next(c)
	}
}
