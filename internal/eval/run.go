package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/tmc/langchaingo/llms"
)

// Runner is what an eval asks of the runner (runner.Manager's methods of
// those names): the app its cases' routes are in, and starting and
// resuming their runs.
type Runner interface {
	App() *app.App
	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error)
}

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
	// Tapes, when set, records each attempt's model calls or replays them
	// (the runner's models must be Tapes.Models); a replay adds a
	// "replay" result that fails when the run diverged from its recording.
	Tapes *Tapes
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
func Run(ctx context.Context, m Runner, cases []Case, opts Options) *Report {
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
				a := runAttempt(ctx, m, &cases[j.c], j.n+1, opts)
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
func runAttempt(ctx context.Context, m Runner, c *Case, n int, opts Options) Attempt {
	start := time.Now()
	a := Attempt{Case: c, N: n}
	defer func() { a.Duration = time.Since(start) }()
	var tp *tape
	if opts.Tapes != nil {
		ctx, tp = opts.Tapes.begin(ctx, c)
	}
	o, err := runCase(ctx, m, c)
	if err != nil {
		o.Err = err.Error()
	}
	a.Observation = o
	if tp != nil {
		if r := opts.Tapes.end(c, tp); r != nil {
			a.Results = append(a.Results, *r)
		}
	}
	a.Results = append(a.Results, Check(c.Expect, o)...)
	judgeModel := opts.Judge
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

func runCase(ctx context.Context, m Runner, c *Case) (Observation, error) {
	path, err := c.Path(m.App().Tree)
	if err != nil {
		return Observation{}, err
	}
	threadID := uuid.NewString()
	over := runner.Overrides{Model: c.Model}
	for i, msg := range c.Setup.Messages {
		events, err := runOnce(ctx, func() (*runner.Run, error) {
			return m.Start(ctx, runner.Request{ThreadID: threadID, Route: path, Messages: []thread.Message{msg}, Overrides: over})
		})
		if err != nil {
			return Observation{}, fmt.Errorf("setup.messages[%d]: %w", i, err)
		}
		if o := Observe(events); o.Err != "" {
			return Observation{}, fmt.Errorf("setup.messages[%d]: %s", i, o.Err)
		}
	}
	events, err := runOnce(ctx, func() (*runner.Run, error) {
		return m.Start(ctx, runner.Request{ThreadID: threadID, Route: path, Messages: c.Input.Messages, Values: c.Input.State, Overrides: over})
	})
	if err != nil {
		return Observation{}, err
	}
	return answerParks(ctx, m, c, runner.ResumeRequest{ThreadID: threadID, Route: path, Overrides: over}, events)
}

// maxResumes bounds the parks one case answers: a route that parks again
// on every answer would otherwise run forever.
const maxResumes = 50

// answerParks answers, with the case's answers, each park of the run
// whose events are given and observes the whole run: it stops at a park
// the answers do not cover, which the observation then shows as parked.
func answerParks(ctx context.Context, m Runner, c *Case, resume runner.ResumeRequest, events []stream.Event) (Observation, error) {
	var all []stream.Event
	var seen []Interrupt
	for n := 0; ; n++ {
		all = append(all, events...)
		seg := Observe(events)
		if seg.Err != "" || !seg.Parked || len(c.Answers) == 0 || n == maxResumes {
			o := Observe(all)
			o.Interrupts, o.Parked = append(seen, seg.Interrupts...), seg.Parked
			if seg.Parked && n == maxResumes {
				o.Err = fmt.Sprintf("the run parked again after %d answered interrupts; a case answers at most %d", n, maxResumes)
			}
			return o, nil
		}
		answers, ok, err := c.decide(seg.Interrupts)
		if err != nil || !ok {
			o := Observe(all)
			o.Interrupts, o.Parked = append(seen, seg.Interrupts...), true
			if err != nil {
				o.Err = err.Error()
			}
			return o, nil
		}
		seen = append(seen, seg.Interrupts...)
		resume.Answers = answers
		var err2 error
		events, err2 = runOnce(ctx, func() (*runner.Run, error) { return m.Resume(ctx, resume) })
		if err2 != nil {
			return Observation{}, fmt.Errorf("answering interrupt %s: %w", seg.Interrupts[0].ID, err2)
		}
	}
}

// decide answers every interrupt of a park (marking each with its
// decision); ok is false when an answer is missing for one of them.
func (c *Case) decide(pending []Interrupt) (answers []capabilities.Answer, ok bool, err error) {
	for i, in := range pending {
		a, found := c.answerFor(in)
		if !found {
			return nil, false, nil
		}
		payload, err := a.payload(in)
		if err != nil {
			return nil, false, err
		}
		pending[i].Answered = a.Decision
		answers = append(answers, capabilities.Answer{InterruptID: in.ID, Status: capabilities.AnswerResolved, Payload: payload})
	}
	return answers, true, nil
}

// runOnce starts one run and reads its events to the end. When ctx ends
// first, the run is cancelled.
func runOnce(ctx context.Context, start func() (*runner.Run, error)) ([]stream.Event, error) {
	run, err := start()
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
