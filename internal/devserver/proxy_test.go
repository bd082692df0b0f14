package devserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/server"
)

// stockBinary builds ./cmd/dawn for a test that needs a real dev child.
func stockBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dawn"+exeSuffix())
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dawn").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dawn: %v\n%s", err, out)
	}
	return bin
}

// devFront is the dev port in front of real children of the stock binary,
// wired as RunGo wires it.
type devFront struct {
	g   *devGoApp
	url string
}

func startDevFront(t *testing.T, files map[string]string) *devFront {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the dawn binary and runs it as a dev child; skipped with -short")
	}
	bin := stockBinary(t)
	appDir := t.TempDir()
	writeDevFiles(t, appDir, files)
	out := &lineWriter{out: io.Discard}
	g := &devGoApp{appDir: appDir, stdout: out, stderr: out, proxy: newDevProxy()}
	ctx, cancel := context.WithCancel(context.Background())
	g.start(ctx, bin, time.Time{}, "")
	if g.child == nil {
		cancel()
		t.Fatal("the dev child did not start")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveDevPort(ln, server.LocalOnly(g.proxy), make(chan error, 1))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		g.proxy.close()
		if g.child != nil {
			g.child.stop()
		}
	})
	return &devFront{g: g, url: "http://" + ln.Addr().String()}
}

const streamRoute = "support/[tenant]/agent.md"

var streamApp = map[string]string{
	streamRoute:                "---\ndescription: Support\n---\nYou help.\n",
	"support/[tenant]/plan.md": "- [ ] One\n- [ ] Two\n- [ ] Three\n",
}

func runRequest(ctx context.Context, base, thread, kind string) (*http.Request, error) {
	body := `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"Help me"}]}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/threads/"+thread+"/runs/"+kind, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// streamToDone reads a run's stream and reports whether it reached its done
// event, and how it ended otherwise.
func streamToDone(client *http.Client, base, thread string) (bool, string) {
	req, err := runRequest(context.Background(), base, thread, "stream")
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		return false, fmt.Sprintf("%s %s", resp.Status, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		if sc.Text() == "event: done" {
			return true, ""
		}
	}
	return false, fmt.Sprintf("the stream ended after %d lines without done: %v", lines, sc.Err())
}

// abortStream starts a run's stream, reads its first event, and hangs up.
func abortStream(client *http.Client, base, thread string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := runRequest(ctx, base, thread, "stream")
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("aborted stream: %s", resp.Status)
	}
	_, err = bufio.NewReader(resp.Body).ReadString('\n')
	return err
}

// TestProxyWithRealChild drives the dev port of a Go app, the proxy in
// front of real children of the stock binary (one build for all parts).
func TestProxyWithRealChild(t *testing.T) {
	f := startDevFront(t, streamApp)
	t.Run("cross-site requests are refused", func(t *testing.T) { testProxyRefusesCrossSite(t, f) })
	t.Run("no stream is cut after an aborted one", func(t *testing.T) { testProxyKeepsStreamsAfterAborts(t, f) })
	t.Run("requests wait across restarts", func(t *testing.T) { testProxyHoldsRequestsDuringRestart(t, f) })
}

// testProxyKeepsStreamsAfterAborts aborts a stream through the real dev
// proxy and child, then streams a run to its end, 500 times: no stream may
// be cut short.
func testProxyKeepsStreamsAfterAborts(t *testing.T, f *devFront) {
	client := &http.Client{Timeout: 30 * time.Second}
	const pairs = 500
	deadline := time.Now().Add(3 * time.Minute)
	cut := 0
	var first []string
	for i := range pairs {
		if time.Now().After(deadline) {
			t.Fatalf("500 pairs did not finish within 3 minutes (%d done, %d cut)", i, cut)
		}
		if err := abortStream(client, f.url, fmt.Sprintf("abort-%d", i)); err != nil {
			cut++
			if len(first) < 3 {
				first = append(first, fmt.Sprintf("pair %d: the stream to abort: %v", i, err))
			}
		}
		if ok, why := streamToDone(client, f.url, fmt.Sprintf("full-%d", i)); !ok {
			cut++
			if len(first) < 3 {
				first = append(first, fmt.Sprintf("pair %d: %s", i, why))
			}
		}
	}
	if cut > 0 {
		t.Fatalf("%d of %d abort-then-stream pairs had a stream cut short through the dev proxy; first: %q", cut, pairs, first)
	}
}

// testProxyHoldsRequestsDuringRestart restarts the dev child while clients
// keep sending requests: each must be answered by a child, none with 502
// or 503, as during a build.
func testProxyHoldsRequestsDuringRestart(t *testing.T, f *devFront) {
	bin := f.g.bin
	client := &http.Client{Timeout: 30 * time.Second}
	stop := make(chan struct{})
	var load requestLoad
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				load.record(sendOne(client, f.url, w, i))
			}
		})
	}
	for range 5 {
		before := load.sent.Load()
		for load.sent.Load() < before+20 {
			time.Sleep(5 * time.Millisecond)
		}
		f.g.start(context.Background(), bin, time.Time{}, "")
		if f.g.child == nil {
			t.Fatal("the restarted child did not start")
		}
	}
	close(stop)
	wg.Wait()
	if load.failed.Load() > 0 {
		t.Fatalf("%d of %d requests sent across 5 restarts failed; first: %q", load.failed.Load(), load.sent.Load(), load.failures)
	}
	t.Logf("%d requests across 5 restarts, all answered", load.sent.Load())
}

// requestLoad counts the requests clients send and keeps the first few
// that were not answered 200.
type requestLoad struct {
	sent, failed atomic.Int64
	mu           sync.Mutex
	failures     []string
}

// record counts one request's answer: its status (-1 when none came) and
// body or error.
func (l *requestLoad) record(status int, msg string) {
	l.sent.Add(1)
	if status == http.StatusOK {
		return
	}
	l.failed.Add(1)
	l.mu.Lock()
	if len(l.failures) < 5 {
		l.failures = append(l.failures, fmt.Sprintf("%d %.200s", status, msg))
	}
	l.mu.Unlock()
}

// sendOne sends client w's request i to the dev port at url: GET /routes
// from even clients, a runs/wait from odd ones. It returns the status and
// body, or -1 and the error when no answer came.
func sendOne(client *http.Client, url string, w, i int) (int, string) {
	var req *http.Request
	if w%2 == 0 {
		req, _ = http.NewRequest(http.MethodGet, url+"/routes", nil)
	} else {
		req, _ = runRequest(context.Background(), url, fmt.Sprintf("restart-%d-%d", w, i), "wait")
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(data)
}

// testProxyRefusesCrossSite checks the dev port of a Go app: a page on
// another site, or a rebound name, gets 403.
func testProxyRefusesCrossSite(t *testing.T, f *devFront) {
	for _, tc := range []struct{ host, origin, kind string }{
		{"", "http://evil.test", "forbidden_origin"},
		{"evil.test", "", "forbidden_host"},
	} {
		req, _ := runRequest(context.Background(), f.url, "cross", "wait")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(data), tc.kind) {
			t.Errorf("Host %q Origin %q: %d %s, want 403 %s", tc.host, tc.origin, resp.StatusCode, data, tc.kind)
		}
	}
}
