package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/client"
)

// userMessage is what the workload asks, and what the aimock fixture
// matches on.
const userMessage = "Help me with my account"

// loadClient runs the workload on one server and route, keeping its
// connections alive.
type loadClient struct {
	api   *client.Client
	route string
	run   client.Run
}

// newClient returns a client that keeps up to conns connections alive.
func newClient(url, route string, conns int) *loadClient {
	tr := &http.Transport{
		MaxIdleConns:        conns + 4,
		MaxIdleConnsPerHost: conns + 4,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	api := &client.Client{BaseURL: strings.TrimRight(url, "/"), HTTP: &http.Client{Transport: tr, Timeout: time.Minute}}
	return &loadClient{api: api, route: route, run: client.Run{Route: route, Input: client.UserInput(userMessage)}}
}

// wait runs the workload on thread with runs/wait and returns the final
// values' JSON.
func (c *loadClient) wait(ctx context.Context, thread string) ([]byte, error) {
	out, err := c.api.Wait(ctx, thread, c.run)
	if err != nil {
		return nil, fmt.Errorf("runs/wait on %s: %w", c.route, err)
	}
	return out, nil
}

// streamToPlan runs the workload on thread with runs/stream and returns the
// time from sending the request to having read the first plan_update, and
// the number of events of each type. It reads the stream to its end.
func (c *loadClient) streamToPlan(ctx context.Context, thread string) (time.Duration, map[string]int, error) {
	start := time.Now()
	s, err := c.api.Stream(ctx, thread, c.run)
	if err != nil {
		return 0, nil, fmt.Errorf("runs/stream on %s: %w", c.route, err)
	}
	defer s.Close()
	var first time.Duration
	counts := map[string]int{}
	for {
		e, err := s.Next()
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
