package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// userMessage is what the workload asks, and what the aimock fixture
// matches on.
const userMessage = "Help me with my account"

// client is a keep-alive HTTP client for one server and route.
type client struct {
	http  *http.Client
	url   string // the server's root URL
	route string
	body  []byte // the runs/wait and runs/stream request body
}

// newClient returns a client that keeps up to conns connections alive.
func newClient(url, route string, conns int) *client {
	tr := &http.Transport{
		MaxIdleConns:        conns + 4,
		MaxIdleConnsPerHost: conns + 4,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	body, _ := json.Marshal(map[string]any{
		"route": route,
		"input": map[string]any{"messages": []map[string]string{{"role": "user", "content": userMessage}}},
	})
	return &client{http: &http.Client{Transport: tr, Timeout: time.Minute}, url: strings.TrimRight(url, "/"), route: route, body: body}
}

// post sends the run request to path and returns the response if it is 200.
func (c *client) post(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, strings.NewReader(string(c.body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// wait runs the workload on thread with runs/wait and returns the final
// values' JSON.
func (c *client) wait(ctx context.Context, thread string) ([]byte, error) {
	resp, err := c.post(ctx, "/threads/"+thread+"/runs/wait")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// streamToPlan runs the workload on thread with runs/stream and returns the
// time from sending the request to having read the first plan_update, and
// the number of events of each type. It reads the stream to its end.
func (c *client) streamToPlan(ctx context.Context, thread string) (time.Duration, map[string]int, error) {
	start := time.Now()
	resp, err := c.post(ctx, "/threads/"+thread+"/runs/stream")
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	r := stream.NewReader(resp.Body)
	var first time.Duration
	counts := map[string]int{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, nil, err
		}
		if e.Type == "plan_update" && counts[e.Type] == 0 {
			first = time.Since(start)
		}
		counts[e.Type]++
	}
	if counts["plan_update"] == 0 {
		return 0, counts, fmt.Errorf("runs/stream on %s ended without a plan_update (events %v)", c.route, counts)
	}
	return first, counts, nil
}

// timed is one measured operation: op is its index in the batch.
type timed func(ctx context.Context, op int) error

// batch is what running n operations measured.
type batch struct {
	Latencies []time.Duration // one per finished operation
	Wall      time.Duration   // first start to last finish
	CutShort  bool            // ctx ended before all n ran
}

// rate is finished operations per second of wall time.
func (b batch) rate() float64 {
	if b.Wall <= 0 {
		return 0
	}
	return float64(len(b.Latencies)) / b.Wall.Seconds()
}

// runBatch runs n operations from workers goroutines and times each. The
// first error stops the batch and is returned; ctx ending stops it quietly
// (CutShort).
func runBatch(ctx context.Context, n, workers int, op timed) (batch, error) {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, n)
		firstErr error
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				err := op(ctx, i)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					if firstErr == nil && ctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b := batch{Latencies: lat, Wall: time.Since(start), CutShort: len(lat) < n}
	return b, firstErr
}
