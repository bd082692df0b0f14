package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on a loopback port in front of a Postgres server,
// whose link a test can cut and restore, as a network partition or a
// database failover does to a server: Cut closes every connection through
// it and refuses new ones until Restore.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewProxy starts a proxy to the server of the Postgres URL dsn and
// returns it with the URL that reaches the same database through it. The
// test's cleanup closes it.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: proxy to %q: %v", dsn, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// Cut closes every connection through the proxy and refuses new ones
// until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.Cut()
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

// pipe forwards one client connection to the server, both ways.
func (p *Proxy) pipe(c net.Conn) {
	if !p.track(c) {
		_ = c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		_ = c.Close()
		if s != nil {
			_ = s.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	copyOne := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go copyOne(s, c)
	go copyOne(c, s)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// track records c to be closed by Cut, unless the link is cut now.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}
