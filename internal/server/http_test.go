package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/stream"
)

// do sends a request built by the caller and returns the response.
func do(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func newRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// runsOf lists a thread's runs; a thread that does not exist has none.
func runsOf(t *testing.T, base, thread string) int {
	t.Helper()
	var runs []json.RawMessage
	resp, err := http.Get(base + "/threads/" + thread + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0
	}
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func TestParseOrigins(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"http://a.test", []string{"http://a.test"}, ""},
		{"http://a.test, http://b.test ,https://c.test:8443,", []string{"http://a.test", "http://b.test", "https://c.test:8443"}, ""},
		{" * ", []string{"*"}, ""},
		{"", nil, ""},
		{"a.test", nil, `"a.test"`},
		{"http://a.test/app", nil, `"http://a.test/app"`},
		{"http://a.test, ftp://b.test", nil, `"ftp://b.test"`},
	}
	for _, tt := range tests {
		got, err := server.ParseOrigins(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseOrigins(%q) = %q, %v; want an error naming %s", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseOrigins(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestCORS checks that origins listed with spaces after commas are allowed,
// and that a browser on an allowed origin can read Dawn-Run-Id, which it
// needs to rejoin a stream.
func TestCORS(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	origins, err := server.ParseOrigins("http://a.test, http://b.test")
	if err != nil {
		t.Fatal(err)
	}
	for name, list := range map[string][]string{"parsed": origins, "untrimmed": {"http://a.test", " http://b.test "}} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(server.New(h.Runs, server.Options{CORSOrigins: list}))
			defer srv.Close()
			pre := newRequest(t, http.MethodOptions, srv.URL+"/threads/c/runs/stream", "")
			pre.Header.Set("Origin", "http://b.test")
			pre.Header.Set("Access-Control-Request-Method", "POST")
			pre.Header.Set("Access-Control-Request-Headers", "content-type,last-event-id")
			resp := do(t, pre)
			resp.Body.Close()
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://b.test" {
				t.Fatalf("preflight from http://b.test: Access-Control-Allow-Origin %q (status %d), want http://b.test", got, resp.StatusCode)
			}

			req := newRequest(t, http.MethodPost, srv.URL+"/threads/c-"+name+"/runs/stream", runBody("/plain", "hi"))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", "http://b.test")
			resp = do(t, req)
			readSSE(t, resp)
			runID := resp.Header.Get("Dawn-Run-Id")
			exposed := strings.Split(strings.ReplaceAll(resp.Header.Get("Access-Control-Expose-Headers"), " ", ""), ",")
			if runID == "" || !slices.ContainsFunc(exposed, func(h string) bool { return strings.EqualFold(h, "Dawn-Run-Id") }) {
				t.Fatalf("stream from http://b.test: Dawn-Run-Id %q, Access-Control-Expose-Headers %q; want the header exposed", runID, exposed)
			}
		})
	}
}

// TestLastEventIDMustBeANumber checks that a rejoin with an id the server
// cannot read is refused instead of replaying the run from its start.
func TestLastEventIDMustBeANumber(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	base := h.Serve(t)
	resp := post(t, base+"/threads/j/runs/stream", runBody("/plain", "hi"))
	events := readSSE(t, resp)
	runID := resp.Header.Get("Dawn-Run-Id")
	if len(events) == 0 || runID == "" {
		t.Fatalf("stream: %d events, run id %q", len(events), runID)
	}
	join := base + "/threads/j/runs/" + runID + "/stream"
	for _, tc := range []struct{ header, query, names string }{
		{"abc", "", "Last-Event-ID"},
		{"1.5", "", "Last-Event-ID"},
		{"-1", "", "Last-Event-ID"},
		{"", "x", "after"},
		{"", "-3", "after"},
	} {
		url := join
		if tc.query != "" {
			url += "?after=" + tc.query
		}
		req := newRequest(t, http.MethodGet, url, "")
		if tc.header != "" {
			req.Header.Set("Last-Event-ID", tc.header)
		}
		resp := do(t, req)
		if resp.StatusCode != http.StatusBadRequest {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Errorf("rejoin with Last-Event-ID %q after %q: %d %.200s, want 400", tc.header, tc.query, resp.StatusCode, body)
			continue
		}
		if e := decodeErr(t, resp); !strings.Contains(e.Error.Message, tc.names) {
			t.Errorf("rejoin with Last-Event-ID %q after %q: error %+v does not name %s", tc.header, tc.query, e, tc.names)
		}
	}
	// A number still works.
	req := newRequest(t, http.MethodGet, join, "")
	req.Header.Set("Last-Event-ID", fmt.Sprint(events[len(events)-2].ID))
	if got := readSSE(t, do(t, req)); len(got) != 1 || got[0].Type != stream.TypeDone {
		t.Errorf("rejoin after the next-to-last event gave %v, want the done event", dawntest.Types(got))
	}
}

// TestJSONBodiesOnly checks that a body the API reads must be sent as JSON:
// a text/plain POST (which a page on any site can send without asking)
// starts no run and cancels nothing.
func TestJSONBodiesOnly(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	h := apptest.New(t, supportApp(t), dawntest.Script().Wait(gate).Reply("ok"), apptest.Options{})
	base := h.Serve(t)
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		req := newRequest(t, http.MethodPost, base+"/threads/p/runs/stream", runBody("/plain", "hi"))
		req.Header.Del("Content-Type")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp := do(t, req)
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			resp.Body.Close()
			t.Errorf("runs/stream with Content-Type %q: %d, want 415", ct, resp.StatusCode)
			continue
		}
		if e := decodeErr(t, resp); e.Error.Kind != "unsupported_media_type" || !strings.Contains(e.Error.Message, "application/json") {
			t.Errorf("runs/stream with Content-Type %q: error %+v, want kind unsupported_media_type naming application/json", ct, e)
		}
	}
	if n := runsOf(t, base, "p"); n != 0 {
		t.Fatalf("refused requests started %d runs", n)
	}

	// A run in flight is not cancelled by a text/plain POST, even an empty one.
	resp := post(t, base+"/threads/p/runs/stream", runBody("/plain", "hi"))
	defer resp.Body.Close()
	req := newRequest(t, http.MethodPost, base+"/threads/p/cancel", "")
	req.Header.Set("Content-Type", "text/plain")
	if r := do(t, req); r.StatusCode != http.StatusUnsupportedMediaType {
		r.Body.Close()
		t.Fatalf("empty text/plain cancel: %d, want 415", r.StatusCode)
	}
	// JSON with a charset and requests with no body at all are fine.
	req = newRequest(t, http.MethodPost, base+"/threads", `{"metadata":{}}`)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if r := do(t, req); r.StatusCode != http.StatusOK {
		t.Errorf("JSON with a charset: %d %+v", r.StatusCode, decodeErr(t, r))
	}
	r := do(t, newRequest(t, http.MethodPost, base+"/threads/p/cancel", ""))
	var c struct{ Status string }
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		t.Fatalf("cancel with no body: %d, body not JSON: %v", r.StatusCode, err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK || c.Status != "interrupted" {
		t.Errorf("cancel with no body: %d status=%q, want 200 and the run interrupted", r.StatusCode, c.Status)
	}
}

// TestLocalOnly checks dev's guard: pages on other sites, and names that
// resolve to 127.0.0.1 only by DNS rebinding, cannot use the API; the
// page's own origin and non-browser clients can.
func TestLocalOnly(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	h := apptest.New(t, supportApp(t), dawntest.Script().Wait(gate).Reply("ok"), apptest.Options{})
	srv := httptest.NewServer(server.LocalOnly(h.API))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	refused := []struct {
		name, host, origin, kind string
	}{
		{"foreign origin", "", "http://evil.test", "forbidden_origin"},
		{"foreign origin on loopback", "", fmt.Sprintf("http://127.0.0.1:%d", port+1), "forbidden_origin"},
		{"sandboxed page", "", "null", "forbidden_origin"},
		{"https origin", "", fmt.Sprintf("https://127.0.0.1:%d", port), "forbidden_origin"},
		{"rebound name", fmt.Sprintf("evil.test:%d", port), "", "forbidden_host"},
		{"rebound name with its origin", fmt.Sprintf("evil.test:%d", port), fmt.Sprintf("http://evil.test:%d", port), "forbidden_host"},
		{"private address", fmt.Sprintf("192.168.1.10:%d", port), "", "forbidden_host"},
		{"localhost lookalike", fmt.Sprintf("localhost.evil.test:%d", port), "", "forbidden_host"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				req := newRequest(t, method, srv.URL+"/threads/l/runs/stream", runBody("/plain", "hi"))
				if method == http.MethodGet {
					req = newRequest(t, method, srv.URL+"/threads/l/state", "")
				}
				req.Header.Set("Content-Type", "text/plain")
				resp := do(t, asFrom(req, tc.host, tc.origin))
				if resp.StatusCode != http.StatusForbidden {
					resp.Body.Close()
					t.Fatalf("%s: %d, want 403", method, resp.StatusCode)
				}
				if e := decodeErr(t, resp); e.Error.Kind != tc.kind || e.Error.Message == "" {
					t.Fatalf("%s: error %+v, want kind %s", method, e, tc.kind)
				}
			}
		})
	}
	if n := runsOf(t, srv.URL, "l"); n != 0 {
		t.Fatalf("refused requests started %d runs", n)
	}

	allowed := []struct{ name, host, origin string }{
		{"no origin", "", ""},
		{"same origin", "", srv.URL},
		{"localhost", fmt.Sprintf("localhost:%d", port), fmt.Sprintf("http://localhost:%d", port)},
		{"LOCALHOST", fmt.Sprintf("LOCALHOST:%d", port), ""},
		{"IPv6 loopback", fmt.Sprintf("[::1]:%d", port), fmt.Sprintf("http://[::1]:%d", port)},
	}
	for _, tc := range allowed {
		resp := do(t, asFrom(newRequest(t, http.MethodGet, srv.URL+"/routes", ""), tc.host, tc.origin))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET /routes: %d, want 200", tc.name, resp.StatusCode)
		}
	}
}

// asFrom returns req sent to host with an Origin header of origin, each
// when it is not empty.
func asFrom(req *http.Request, host, origin string) *http.Request {
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return req
}

// serveWith serves api with limits the way dawn start does, on a loopback
// port, and returns the address.
func serveWith(t *testing.T, api http.Handler, limits server.HTTPLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := limits.Server(api)
	go srv.Serve(limits.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestHTTPLimitsDefaults(t *testing.T) {
	srv := server.HTTPLimits{}.Server(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("default server: ReadHeaderTimeout %s IdleTimeout %s MaxHeaderBytes %d; want all set, headers capped below 1 MiB", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("default server: ReadTimeout %s WriteTimeout %s; want 0, so streams are not cut", srv.ReadTimeout, srv.WriteTimeout)
	}
	l := server.HTTPLimits{}.WithDefaults()
	if l.BodyTimeout <= 0 || l.MaxConns <= 0 {
		t.Errorf("defaults %+v: want a body timeout and a connection cap", l)
	}
	set := server.HTTPLimits{ReadHeaderTimeout: time.Second, BodyTimeout: 2 * time.Second, IdleTimeout: 3 * time.Second, MaxHeaderBytes: 4096, MaxConns: 5}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set limits: %+v, want %+v", got, set)
	}
}

// TestBodyReadTimeout trickles a body one byte at a time: the server must
// stop waiting for it after the body timeout and answer 408.
func TestBodyReadTimeout(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	limits := server.HTTPLimits{BodyTimeout: 300 * time.Millisecond}
	api := server.New(h.Runs, server.Options{HTTP: limits})
	addr := serveWith(t, api, api.HTTPLimits())

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := runBody("/plain", "hi")
	fmt.Fprintf(conn, "POST /threads/slow/runs/wait HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// One byte every 100ms: the whole body would take several seconds.
		for i := range len(body) {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("trickled body: %d %s, want 408", resp.StatusCode, data)
	}
	if e := decodeErr(t, resp); e.Error.Kind != "body_timeout" || !strings.Contains(e.Error.Message, "body") {
		t.Fatalf("trickled body: error %+v, want kind body_timeout", e)
	}
	if n := runsOf(t, "http://"+addr, "slow"); n != 0 {
		t.Fatalf("a trickled body started %d runs", n)
	}
}

// TestBodyTimeoutSparesStreams checks that the body deadline ends once the
// body is read: a stream that lasts longer than the body timeout runs to
// its done event.
func TestBodyTimeoutSparesStreams(t *testing.T) {
	gate := make(chan struct{})
	h := apptest.New(t, supportApp(t), dawntest.Script().Wait(gate).Reply("late answer"), apptest.Options{})
	api := server.New(h.Runs, server.Options{HTTP: server.HTTPLimits{BodyTimeout: 100 * time.Millisecond}})
	addr := serveWith(t, api, api.HTTPLimits())
	resp := post(t, "http://"+addr+"/threads/long/runs/stream", runBody("/plain", "hi"))
	time.AfterFunc(600*time.Millisecond, func() { close(gate) }) // well past the body timeout
	events := readSSE(t, resp)
	if len(events) == 0 || events[len(events)-1].Type != stream.TypeDone || strings.Contains(string(events[len(events)-1].Data), "error") {
		t.Fatalf("a stream longer than the body timeout ended with %v", dawntest.Types(events))
	}
}

// TestMaxConns checks that connections beyond the cap wait to be served
// until one of those open closes.
func TestMaxConns(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	api := server.New(h.Runs, server.Options{HTTP: server.HTTPLimits{MaxConns: 2}})
	addr := serveWith(t, api, api.HTTPLimits())
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A served request proves the server accepted the connection.
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("held connection: %v %v", resp, err)
		}
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprintf(third, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(third)
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var ne net.Error
	if resp, err := http.ReadResponse(br, nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a third connection over a cap of 2 was served: %v %v", resp, err)
	}
	held[0].Close()
	third.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the waiting connection was not served once one closed: %v %v", resp, err)
	}
}

// TestHeaderCap checks that headers over the default cap (well under Go's
// own 1 MiB) are refused before any handler.
func TestHeaderCap(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	api := server.New(h.Runs, server.Options{})
	addr := serveWith(t, api, api.HTTPLimits())
	req := newRequest(t, http.MethodGet, "http://"+addr+"/healthz", "")
	req.Header.Set("X-Big", strings.Repeat("x", 200<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("200 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// TestLocalOnlyAnswersRequestsWithoutHost: an HTTP/1.0 request with no
// Host header, as a load balancer's health check sends, is answered: only
// a browser page can be rebound, and a browser always sends a Host.
func TestLocalOnlyAnswersRequestsWithoutHost(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	srv := httptest.NewServer(server.LocalOnly(h.API))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("GET /healthz over HTTP/1.0 with no Host: %q %v, want 200", status, err)
	}
}
