package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// Host is what the MCP endpoint needs of the core: a place on the mux,
// the app, the runs it starts and the threads it reads, and the server's
// logger.
type Host interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	App() *app.App
	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	GetThread(ctx context.Context, id string) (store.Thread, error)
	// Subscribed counts a reader of a run's events; call what it returns
	// when the reader leaves.
	Subscribed() func()
	Logger() *slog.Logger
}

// endpoint serves the app's routes as MCP tools on a Host.
type endpoint struct {
	host    Host
	handler *sdk.StreamableHTTPHandler

	mu sync.Mutex
	// app is the app the server and err were built from: a reload (dawn
	// dev) builds them again.
	app    *app.App
	server *sdk.Server
	err    error
}

// Mount serves POST /mcp on h (GET and DELETE answer 405: the endpoint is
// stateless and keeps no sessions), behind the core's middleware, so the
// API key of the HTTP API guards it too. Routes whose tool names collide
// are logged here and make /mcp answer 500 naming them until fixed.
func Mount(h Host) {
	e := &endpoint{host: h}
	e.handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server {
		s, _ := e.current()
		return s
	}, &sdk.StreamableHTTPOptions{
		Stateless: true,
		// The call's context ends with the request, so a client that
		// leaves cancels its run.
		PropagateRequestCancellation: true,
		// The core's middleware already bounds the body (limits.body_bytes
		// in dawn.yaml) and guards the API (the API key; dawn dev's host
		// and origin checks): the SDK's own localhost check would refuse
		// a proxy on the same machine that keeps the public Host header.
		MaxRequestBodyBytes:        -1,
		DisableLocalhostProtection: true,
	})
	if _, err := e.current(); err != nil {
		h.Logger().Error("MCP endpoint", "error", err)
	}
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		h.Add(m, Path, e.serve)
	}
}

func (e *endpoint) serve(c echo.Context) error {
	if _, err := e.current(); err != nil {
		return wire.NewError(http.StatusInternalServerError, "mcp_tools", err.Error())
	}
	e.handler.ServeHTTP(c.Response(), c.Request())
	return nil
}

// current returns the MCP server of the app being served now, building it
// on first use after a reload.
func (e *endpoint) current() (*sdk.Server, error) {
	a := e.host.App()
	e.mu.Lock()
	defer e.mu.Unlock()
	if a == e.app {
		return e.server, e.err
	}
	tools, err := toolsOf(a)
	s := sdk.NewServer(&sdk.Implementation{Name: "dawn", Version: "1"}, nil)
	for _, t := range tools {
		s.AddTool(&sdk.Tool{Name: t.name, Description: t.description(), InputSchema: t.schema}, e.call(t))
	}
	e.app, e.server, e.err = a, s, err
	return s, err
}
