package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectTimeout bounds starting a server and the MCP handshake (npx may
// download the server on first use).
const connectTimeout = 2 * time.Minute

// shared holds the process's server connections.
var shared = &pool{conns: map[string]*conn{}}

// pool keeps one connection per server and settings, so that reloading the
// app reuses the running servers.
type pool struct {
	mu    sync.Mutex
	conns map[string]*conn
}

// conn returns the connection for s, run from appDir.
func (p *pool) conn(appDir string, s Server) *conn {
	key, _ := json.Marshal(struct {
		Dir string
		S   Server
	}{appDir, s})
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.conns[string(key)]
	if !ok {
		c = &conn{server: s, dir: appDir}
		p.conns[string(key)] = c
	}
	return c
}

func (p *pool) shutdown() {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[string]*conn{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

// conn is one server: a live session, or none until the next use starts
// one.
type conn struct {
	server Server
	dir    string

	mu    sync.Mutex
	names []string // the route tool names of the last listing
	cur   *mcp.ClientSession
	dead  chan struct{} // closed when cur's connection ends
}

// session returns the live session, starting the server when there is none
// or the last one died.
func (c *conn) session(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		select {
		case <-c.dead:
			go c.cur.Close() // reaps the process; it may wait for it
			c.cur = nil
		default:
			return c.cur, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	defer cancel()
	t, stderr, err := c.transport()
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "dawn", Version: "v0"}, nil)
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		if tail := stderr.String(); tail != "" {
			err = fmt.Errorf("%w; the server wrote: %s", err, tail)
		}
		return nil, fmt.Errorf("starting %s: %w", c.server.Transport(), err)
	}
	dead := make(chan struct{})
	go func() { _ = s.Wait(); close(dead) }()
	c.cur, c.dead = s, dead
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

func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		c.cur.Close()
		c.cur = nil
	}
}

// list returns the server's tools.
func (c *conn) list(ctx context.Context) ([]*mcp.Tool, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			c.forget(s)
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		tools = append(tools, t)
	}
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
