package a2a

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/router"
	"github.com/labstack/echo/v4"
)

// Paths this wire serves.
const (
	// Prefix is where each route's agent lives: POST /a2a/{route} is its
	// JSON-RPC endpoint, GET /a2a/{route}/.well-known/agent-card.json its
	// card, and GET /a2a the cards of every route.
	Prefix = "/a2a"
	// CardPath is the A2A 0.3 well-known path of an agent card, below an
	// agent's URL (and at the server's root, for ?route=).
	CardPath = "/.well-known/agent-card.json"
)

// Host is what the A2A endpoints need of the core: a place on the mux,
// the app and the server's settings, the runs they start, resume, follow
// and stop (on this replica or another sharing the store), and the runs
// and state of a thread, read owner-checked.
type Host interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	App() *app.App
	AuthMode() string
	Logger() *slog.Logger
	Classify(err error) *wire.Error

	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error)
	Active(ctx context.Context, threadID string) *runner.Run
	RemoteRun(ctx context.Context, threadID string) (r store.Run, ok bool)
	StopRemote(ctx context.Context, r store.Run, wait bool) error
	Dequeue(ctx context.Context, runID string) error
	Follow(runID string, after int64) *runner.Follower
	// Subscribed counts a reader of a run's events; call what it returns
	// when the reader leaves.
	Subscribed() func()

	GetRun(ctx context.Context, runID string) (store.Run, error)
	Runs(ctx context.Context, threadID string) ([]store.Run, error)
	Latest(ctx context.Context, threadID string) (store.Checkpoint, error)

	// CheckWebhook checks a push notification URL as a run's webhook URL
	// is checked; Notify records a push in the webhook outbox.
	CheckWebhook(ctx context.Context, url string) error
	Notify(ctx context.Context, hook store.Webhook) error
	// SendsWebhooks reports whether the server has webhook settings,
	// without which it sends no push notifications.
	SendsWebhooks() bool
}

// endpoint serves A2A on a Host.
type endpoint struct {
	host Host
}

// Mount mounts the A2A endpoints on h.
func Mount(h Host) {
	s := &endpoint{host: h}
	h.Add(http.MethodGet, Prefix, s.list)
	h.Add(http.MethodGet, Prefix+"/*", s.card)
	h.Add(http.MethodPost, Prefix+"/*", s.rpc)
	h.Add(http.MethodGet, CardPath, s.rootCard)
}

// rpc answers one JSON-RPC request to a route's agent with the A2A SDK's
// JSON-RPC transport, over a handler bound to the route; its streams get
// keep-alive comments, which the SDK does not send.
func (s *endpoint) rpc(c echo.Context) error {
	key, err := pathRoute(strings.TrimPrefix(c.Request().URL.EscapedPath(), Prefix))
	if err != nil {
		return err
	}
	p, err := s.resolve(key)
	if err != nil {
		return err
	}
	serveKeptAlive(a2asrv.NewJSONRPCHandler(&handler{host: s.host, key: key, route: p}), c.Response(), c.Request())
	return nil
}

// pathRoute is the route an escaped request path names after /a2a: each
// segment URL-decoded ("/support/acme", "/support/%5Btenant%5D"), or one
// segment holding the whole route URL-encoded ("/%2Fsupport%2Facme").
func pathRoute(escaped string) (string, error) {
	key, err := url.PathUnescape(escaped)
	if err != nil || strings.Trim(key, "/") == "" {
		return "", wire.NewError(http.StatusNotFound, "route_not_found", fmt.Sprintf("no route in %q: the A2A endpoint of a route is %s/{route}, like %s/support/acme (GET %s lists the agents)", Prefix+escaped, Prefix, Prefix, Prefix))
	}
	return "/" + strings.Trim(key, "/"), nil
}

// resolve finds the route key names; a subagent, which runs only as its
// parent's task, is not an agent of its own.
func (s *endpoint) resolve(key string) (*capabilities.Prepared, error) {
	p, _, err := s.host.App().Resolve(key)
	var nf *router.NotFoundError
	switch {
	case errors.As(err, &nf) || errors.Is(err, router.ErrInvalidPath):
		return nil, wire.NewError(http.StatusNotFound, "route_not_found", fmt.Sprintf("no agent at %s%s: no route matches %q (GET %s lists the agents)", Prefix, key, key, Prefix))
	case err != nil:
		return nil, err
	case p.Route.Kind == router.KindSubagent:
		return nil, wire.NewError(http.StatusNotFound, "route_not_found", fmt.Sprintf("no agent at %s%s: %s is a subagent of %s and runs only as its task", Prefix, key, p.Route.ID, p.Route.Parent))
	}
	return p, nil
}

// served is every route that runs on its own (not the subagents), in
// route id order.
func (s *endpoint) served() []*capabilities.Prepared {
	a := s.host.App()
	var out []*capabilities.Prepared
	if a.Tree == nil {
		return nil
	}
	for _, r := range a.Tree.Routes {
		if p, ok := a.Routes[r.ID]; ok && r.Kind != router.KindSubagent {
			out = append(out, p)
		}
	}
	return out
}
