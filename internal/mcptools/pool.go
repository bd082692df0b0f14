package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectTimeout bounds starting a server and the MCP handshake (npx may
// download the server on first use).
const connectTimeout = 2 * time.Minute

// shared holds the process's server connections.
var shared = &pool{conns: map[string]*conn{}}

// errRemoved is a call's error through a tool of an app loaded before
// dawn.yaml dropped or changed its server, or before Shutdown.
var errRemoved = errors.New("the server was stopped because dawn.yaml no longer names it with these settings (or Dawn is shutting down); reload the app")

// pool keeps one connection per app folder and server settings, so that
// reloading the app reuses the running servers and their tool lists.
type pool struct {
	mu    sync.Mutex
	conns map[string]*conn
}

func poolKey(appDir string, s Server) string {
	key, _ := json.Marshal(struct {
		Dir string
		S   Server
	}{appDir, s})
	return string(key)
}

// conn returns the connection for s, run from appDir.
func (p *pool) conn(appDir string, s Server) *conn {
	key := poolKey(appDir, s)
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.conns[key]
	if !ok {
		c = &conn{server: s, dir: appDir}
		p.conns[key] = c
	}
	return c
}

// retain stops the connections of appDir whose settings are not among
// servers: dawn.yaml dropped or changed them since the last load.
func (p *pool) retain(appDir string, servers []Server) {
	keep := map[string]bool{}
	for _, s := range servers {
		keep[poolKey(appDir, s)] = true
	}
	var stale []*conn
	p.mu.Lock()
	for key, c := range p.conns {
		if c.dir == appDir && !keep[key] {
			stale = append(stale, c)
			delete(p.conns, key)
		}
	}
	p.mu.Unlock()
	stopAll(stale)
}

func (p *pool) shutdown() {
	p.mu.Lock()
	conns := slices.Collect(maps.Values(p.conns))
	p.conns = map[string]*conn{}
	p.mu.Unlock()
	stopAll(conns)
}

func stopAll(conns []*conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.stop)
	}
	wg.Wait()
}

// conn is one server: a live session, or none until a tool call starts
// one. The tool list is read at the first load and kept.
type conn struct {
	server Server
	dir    string

	mu      sync.Mutex
	tools   []*mcp.Tool // the last listing; nil before the first
	names   []string    // the route tool names of the last listing
	cur     *mcp.ClientSession
	dead    chan struct{} // closed when cur's connection ends
	stopped bool          // out of the pool: never started again
}

// liveLocked returns the live session, or nil when there is none or it
// died. c.mu is held.
func (c *conn) liveLocked() *mcp.ClientSession {
	if c.cur == nil {
		return nil
	}
	select {
	case <-c.dead:
		go c.cur.Close() // reaps the process; it may wait for it
		c.cur = nil
		return nil
	default:
		return c.cur
	}
}

// session returns the live session, starting the server when there is none
// or the last one died.
func (c *conn) session(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, errRemoved
	}
	if s := c.liveLocked(); s != nil {
		return s, nil
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	dead := make(chan struct{})
	go func() { _ = s.Wait(); close(dead) }()
	c.cur, c.dead = s, dead
	return s, nil
}

// connect starts the server and completes the MCP handshake.
func (c *conn) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	defer cancel()
	t, stderr, err := c.transport()
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "dawn", Version: "v0"}, nil)
	stop := c.sayWhenSlow()
	s, err := client.Connect(ctx, t, nil)
	stop()
	if err != nil {
		if tail := stderr.String(); tail != "" {
			err = fmt.Errorf("%w; the server wrote: %s", err, tail)
		}
		return nil, fmt.Errorf("starting %s: %w", c.server.Transport(), err)
	}
	return s, nil
}

// forget drops s after its connection failed, so the next use restarts the
// server.
func (c *conn) forget(s *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == s {
		go s.Close() // reaps the process; it may wait for it
		c.cur = nil
	}
}

// stop ends the live session, if any, and keeps the server from starting
// again.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cur != nil {
		c.cur.Close()
		c.cur = nil
	}
}

// list returns the server's tools. A live session (the server runs for
// earlier calls) lists them again; otherwise the last listing is reused,
// and the first is read through a session closed right after, so loading
// the app leaves no server running.
func (c *conn) list(ctx context.Context) ([]*mcp.Tool, error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errRemoved
	}
	live, cached := c.liveLocked(), c.tools
	c.mu.Unlock()
	if live == nil && cached == nil && capabilities.SavedToolListsOK(ctx) {
		cached, _ = savedListing(c.dir, c.server)
	}
	if live == nil && cached != nil {
		return cached, nil
	}
	s := live
	if s == nil {
		var err error
		if s, err = c.connect(ctx); err != nil {
			return nil, err
		}
		defer s.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			if live != nil {
				c.forget(live)
			}
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		tools = append(tools, t)
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	saveListing(c.dir, c.server, tools)
	return tools, nil
}

// transport makes the transport for the server: a process started in the
// app folder, or an HTTP client adding the headers.
func (c *conn) transport() (mcp.Transport, *tailBuffer, error) {
	s := c.server
	stderr := &tailBuffer{max: 2048}
	if s.URL != "" {
		headers := http.Header{}
		for k, v := range s.Headers {
			val, err := expand(v, os.LookupEnv)
			if err != nil {
				return nil, stderr, fmt.Errorf("headers.%s: %w; set it before starting dawn", k, err)
			}
			headers.Set(k, val)
		}
		client := &http.Client{Transport: &headerTransport{headers: headers, base: http.DefaultTransport}}
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: client, DisableStandaloneSSE: true}, stderr, nil
	}
	command := s.Command
	if strings.ContainsRune(command, filepath.Separator) && !filepath.IsAbs(command) {
		command = filepath.Join(c.dir, command) // relative to the app folder
	}
	cmd := exec.Command(command, s.Args...)
	cmd.Dir = c.dir
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		val, err := expand(v, os.LookupEnv)
		if err != nil {
			return nil, stderr, fmt.Errorf("env.%s: %w; set it before starting dawn", k, err)
		}
		cmd.Env = append(cmd.Env, k+"="+val)
	}
	cmd.Stderr = stderr
	return &mcp.CommandTransport{Command: cmd}, stderr, nil
}

// headerTransport adds headers to every request.
type headerTransport struct {
	headers http.Header
	base    http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// tailBuffer keeps the last max bytes written: a server's stderr, for the
// error when it fails to start.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

func (c *conn) setNames(names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = names
}

// names returns the route tool names last listed for s (from any app
// folder), or none before it was started.
func (p *pool) names(s Server) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if !reflect.DeepEqual(c.server, s) {
			continue
		}
		c.mu.Lock()
		names := c.names
		c.mu.Unlock()
		return names
	}
	return nil
}
