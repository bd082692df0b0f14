package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// bigRun is an ended run whose event log is about logBytes: a streamed
// answer of 1 KiB chunks.
type bigRun struct {
	url, thread, id string
	chunks          int
}

const chunkBytes = 1024

// startBigRun serves an app on a SQLite file and runs one route to its end,
// streaming an answer of logBytes in 1 KiB chunks.
func startBigRun(t *testing.T, logBytes int) bigRun {
	t.Helper()
	dir := writeApp(t, map[string]string{"big/agent.md": "You write at length."})
	chunks := logBytes / chunkBytes
	model := dawntest.Script().Then(func(_ []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		piece := strings.Repeat("x", chunkBytes-1) + " "
		for range chunks {
			if err := opts.StreamingFunc(context.Background(), []byte(piece)); err != nil {
				return nil, err
			}
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Repeat(piece, chunks)}}}, nil
	})
	h := apptest.New(t, dir, model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	// Small socket buffers, as a slow reader over a real network leaves
	// them full: a writer blocks after a few KiB, not after the megabytes
	// loopback would take.
	srv := httptest.NewUnstartedServer(h.API)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	base := srv.URL
	resp := post(t, base+"/threads/big/runs/stream", runBody("/big", "Write."))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream = %d", resp.StatusCode)
	}
	var runs []struct {
		RunID string `json:"run_id"`
	}
	if code := getJSON(t, base+"/threads/big/runs", &runs); code != http.StatusOK || len(runs) != 1 {
		t.Fatalf("runs of the thread: %d %+v", code, runs)
	}
	return bigRun{url: base, thread: "big", id: runs[0].RunID, chunks: chunks}
}

// smallBuffers is a listener whose connections have 16 KiB send buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// path is the rejoin path of the run, in Dawn's dialect or LangGraph's.
func (r bigRun) path(dialect string) string {
	p := "/threads/" + r.thread + "/runs/" + r.id + "/stream"
	if dialect == "langgraph" {
		p += "?stream_mode=messages-tuple"
	}
	return p
}

// stall opens a connection that asks for path, reads the first bytes of
// the answer and then reads nothing more: a slow reader.
func stall(t testing.TB, base, path string) net.Conn {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nLast-Event-ID: 0\r\n\r\n", path, u.Host)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	first := make([]byte, 64)
	if _, err := io.ReadFull(conn, first); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if !strings.HasPrefix(string(first), "HTTP/1.1 200") {
		t.Fatalf("GET %s: %q", path, first)
	}
	return conn
}

// heapAfterGC is the live heap, in bytes.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSlowReplayReadersHoldAPage: readers that rejoin an ended 8 MiB run
// and then stall cost the server a page of its log each, not the log: the
// heap grows by far less than a log per reader, on Dawn's wire and on
// LangGraph's.
func TestSlowReplayReadersHoldAPage(t *testing.T) {
	const logBytes = 8 << 20
	readers := 10
	if raceEnabled {
		readers = 4 // the race detector makes each replay several times slower
	}
	run := startBigRun(t, logBytes)
	for _, dialect := range []string{"dawn", "langgraph"} {
		t.Run(dialect, func(t *testing.T) {
			base := heapAfterGC()
			conns := make([]net.Conn, readers)
			for i := range conns {
				conns[i] = stall(t, run.url, run.path(dialect))
			}
			// The writers fill the sockets and block; until they all have,
			// a reader's first reads of the store are in flight. Measure
			// until the heap settles near a page a reader, for up to 10s:
			// a replay that holds the log never does.
			var grown, perReader int64
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				grown = int64(heapAfterGC()) - int64(base)
				perReader = grown / int64(readers)
				if perReader <= logBytes/32 || time.Now().After(deadline) {
					break
				}
			}
			t.Logf("%s: %d stalled readers of a %d MiB log: heap +%.1f MiB, %.0f KiB a reader",
				dialect, readers, logBytes>>20, float64(grown)/(1<<20), float64(perReader)/1024)
			if perReader > logBytes/8 {
				t.Errorf("each stalled reader holds %d KiB of the server's heap, want well under the %d KiB log (a page of it)",
					perReader>>10, logBytes>>10)
			}
			for _, c := range conns {
				c.Close()
			}
		})
	}
}

// TestReplayPagesWholeLog: a replay read to its end, paged from the
// store, has every event of the run once, in order, then done; a replay
// after an id has exactly the events after it.
func TestReplayPagesWholeLog(t *testing.T) {
	run := startBigRun(t, 1<<20)
	full := rejoin(t, run, 0)
	chunks := 0
	for i, e := range full {
		if i > 0 && e.ID != full[i-1].ID+1 {
			t.Fatalf("event id %d follows %d", e.ID, full[i-1].ID)
		}
		if e.Type == stream.TypeChunk {
			var text string
			if err := json.Unmarshal(e.Data, &text); err != nil || len(text) != chunkBytes {
				t.Fatalf("chunk %d: %d bytes, %v", e.ID, len(text), err)
			}
			chunks++
		}
	}
	if chunks != run.chunks || full[len(full)-1].Type != stream.TypeDone {
		t.Fatalf("the replay has %d chunks and ends with %s, want %d chunks then done", chunks, full[len(full)-1].Type, run.chunks)
	}
	if tail := rejoin(t, run, full[len(full)-1].ID); len(tail) != 0 {
		t.Errorf("rejoin after the done event: %d events, want none", len(tail))
	}
	for _, after := range []int64{1, 300, full[len(full)-2].ID} {
		tail := rejoin(t, run, after)
		if len(tail) == 0 {
			t.Fatalf("rejoin after %d: no events", after)
		}
		want := full[after-full[0].ID+1:]
		if len(tail) != len(want) || tail[0].ID != want[0].ID || string(tail[len(tail)-1].Data) != string(want[len(want)-1].Data) {
			t.Errorf("after %d: %d events from id %d, want %d from id %d", after, len(tail), tail[0].ID, len(want), want[0].ID)
		}
	}
}

// rejoin reads the run's stream on Dawn's wire from after to its end.
func rejoin(t *testing.T, run bigRun, after int64) []stream.Event {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, run.url+run.path("dawn"), nil)
	req.Header.Set("Last-Event-ID", fmt.Sprint(after))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readSSE(t, resp)
}
