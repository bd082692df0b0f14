package langgraph

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// This file serves stateless runs: POST /runs, /runs/stream and
// /runs/wait, each on a thread of its own.

// Kinds of stateless run.
const (
	statelessBackground = iota
	statelessStream
	statelessWait
)

// lgStateless serves POST /runs, /runs/stream and /runs/wait: a run on a
// new thread, deleted when the run ends unless on_completion is "keep".
func (s *dialect) lgStateless(kind int) echo.HandlerFunc {
	return func(c echo.Context) error {
		threadID := uuid.NewString()
		run, req, body, err := s.parseLGRun(c, threadID)
		if err != nil {
			return err
		}
		if kind == statelessWait {
			req.Stream = false
		}
		// The run's thread is kept until this request has answered: a
		// run that ends before the answer is written (a fast model on a
		// busy server) is read back from the store.
		answered := make(chan struct{})
		defer close(answered)
		started, queued, err := s.startStateless(c.Request().Context(), run, req, body, answered)
		if err != nil {
			return err
		}
		if started != nil && beforeStatelessAnswer != nil {
			beforeStatelessAnswer(threadID, started)
		}
		if started == nil {
			// A delayed run: the thread is kept, as a background run's.
			switch kind {
			case statelessStream:
				return s.streamQueued(c, run, queued)
			case statelessWait:
				setRunHeaders(c, threadID, queued.ID)
				return s.joinResult(c, queued)
			}
			return s.answerRun(c, threadID, queued.ID)
		}
		switch kind {
		case statelessStream:
			return s.streamLG(c, run, started, fromStart)
		case statelessWait:
			return s.waitLG(c, threadID, started)
		}
		return s.answerRun(c, threadID, started.ID)
	}
}

// beforeStatelessAnswer, when set (by tests), runs after a stateless run
// has started, before its request answers.
var beforeStatelessAnswer func(threadID string, run *runner.Run)

// startStateless starts a run on a thread of its own (run.ThreadID, new),
// which is deleted when the run ends and answered is closed (nil: when the
// run ends), unless on_completion is "keep". A delayed run answers with
// started nil and the queued run.
func (s *dialect) startStateless(ctx context.Context, run *lgRun, req runner.Request, body lgRunBody, answered <-chan struct{}) (*runner.Run, store.Run, error) {
	body.IfNotExists = "create"
	started, queued, err := s.startLG(ctx, run, req, body)
	if err != nil || started == nil {
		return started, queued, err
	}
	if body.OnCompletion != "keep" {
		threadID := run.ThreadID
		go func() {
			<-started.Done()
			if answered != nil {
				<-answered
			}
			if err := s.host.DeleteThread(context.Background(), threadID); err != nil && !errors.Is(err, store.ErrNotFound) {
				s.host.Logger().Warn("cannot delete the thread of a stateless run", "thread", threadID, "err", err)
			}
		}()
	}
	return started, queued, nil
}
