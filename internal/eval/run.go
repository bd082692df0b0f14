package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/tmc/langchaingo/llms"
)

// Options configure Run.
type Options struct {
	// Repeat runs each case this many times (default 1).
	Repeat int
	// Concurrency bounds the runs in flight (default 1).
	Concurrency int
	// Judge scores judge criteria; nil fails them with a message that
	// says how to set one.
	Judge llms.Model
	// Progress, when set, is told of each finished attempt, from one
	// goroutine at a time.
	Progress func(done, total int, a Attempt)
}

// Attempt is one run of a case.
type Attempt struct {
	Case        *Case         `json:"-"`
	N           int           `json:"n"` // 1-based
	Results     []Result      `json:"results"`
	Observation Observation   `json:"observation"`
	Duration    time.Duration `json:"-"`
}

// Pass reports whether every expectation held.
func (a Attempt) Pass() bool {
	for _, r := range a.Results {
		if !r.Pass {
			return false
		}
	}
	return true
}

// Run runs every case opts.Repeat times on m, at most opts.Concurrency at
// once, and returns the report. Each attempt runs on a new thread.
func Run(ctx context.Context, m *runner.Manager, cases []Case, opts Options) *Report {
	repeat, workers := max(opts.Repeat, 1), max(opts.Concurrency, 1)
	type job struct{ c, n int }
	jobs := make(chan job)
	attempts := make([][]Attempt, len(cases))
	for i := range attempts {
		attempts[i] = make([]Attempt, repeat)
	}
	var mu sync.Mutex
	done, total := 0, len(cases)*repeat
	var wg sync.WaitGroup
	for range min(workers, max(total, 1)) {
		wg.Go(func() {
			for j := range jobs {
				a := runAttempt(ctx, m, &cases[j.c], j.n+1, opts.Judge)
				mu.Lock()
				attempts[j.c][j.n] = a
				done++
				if opts.Progress != nil {
					opts.Progress(done, total, a)
				}
				mu.Unlock()
			}
		})
	}
	for n := range repeat {
		for c := range cases {
			jobs <- job{c, n}
		}
	}
	close(jobs)
	wg.Wait()
	return newReport(cases, attempts)
}

// runAttempt runs the case's setup turns and then its input on a new
// thread, and checks what the input's run showed.
func runAttempt(ctx context.Context, m *runner.Manager, c *Case, n int, judgeModel llms.Model) Attempt {
	start := time.Now()
	a := Attempt{Case: c, N: n}
	defer func() { a.Duration = time.Since(start) }()
	o, err := runCase(ctx, m, c)
	if err != nil {
		o.Err = err.Error()
	}
	a.Observation = o
	a.Results = Check(c.Expect, o)
	if c.Expect.Judge != nil {
		if o.Err != "" {
			a.Results = append(a.Results, Result{Expectation: ExpectJudge, Detail: "not judged: the run failed"})
		} else {
			a.Results = append(a.Results, judge(ctx, judgeModel, *c, o))
		}
	}
	a.Duration = time.Since(start)
	return a
}

func runCase(ctx context.Context, m *runner.Manager, c *Case) (Observation, error) {
	path, err := c.Path(m.App().Tree)
	if err != nil {
		return Observation{}, err
	}
	threadID := uuid.NewString()
	for i, msg := range c.Setup.Messages {
		events, err := runOnce(ctx, m, runner.Request{ThreadID: threadID, Route: path, Messages: []thread.Message{msg}})
		if err != nil {
			return Observation{}, fmt.Errorf("setup.messages[%d]: %w", i, err)
		}
		if o := Observe(events); o.Err != "" {
			return Observation{}, fmt.Errorf("setup.messages[%d]: %s", i, o.Err)
		}
	}
	events, err := runOnce(ctx, m, runner.Request{ThreadID: threadID, Route: path, Messages: c.Input.Messages, Values: c.Input.State})
	if err != nil {
		return Observation{}, err
	}
	return Observe(events), nil
}

// runOnce starts one run and reads its events to the end. When ctx ends
// first, the run is cancelled.
func runOnce(ctx context.Context, m *runner.Manager, req runner.Request) ([]stream.Event, error) {
	run, err := m.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	sub := run.Log.Subscribe(0)
	defer sub.Close()
	var events []stream.Event
	for {
		e, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			<-run.Done()
			return events, nil
		}
		if err != nil {
			run.Cancel()
			<-run.Done()
			return events, err
		}
		events = append(events, e)
	}
}
