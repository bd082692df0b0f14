package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// runEnd is how a run ended, as the store records it.
type runEnd struct {
	runID, threadID string
	status, errText string
	record          json.RawMessage
	events          []stream.Event
	// webhook is the run's webhook delivery, recorded with its end.
	webhook *store.Webhook
}

// Retry delays for the ends of runs the store could not record.
const (
	firstRetry = 50 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// finishStore records the end of run. When the store cannot write (a full
// disk, say), the end is kept and recorded as soon as it can: before the
// thread's next run or its deletion, and by a retry in the background.
// Until then the store still shows the run as running and the thread busy.
// hook, when not nil, is the run's webhook delivery, recorded with the end.
func (m *Manager) finishStore(run *Run, status, errText string, record json.RawMessage, events []stream.Event, hook *store.Webhook) {
	end := runEnd{runID: run.ID, threadID: run.ThreadID, status: status, errText: errText, record: record, events: events, webhook: hook}
	err := m.record(end)
	if err == nil {
		return
	}
	if !retryable(err) {
		m.logger.Error("cannot record the end of a run", "thread", run.ThreadID, "run", run.ID, "err", err)
		return
	}
	m.logger.Error("cannot record the end of a run; retrying until the store can write", "thread", run.ThreadID, "run", run.ID, "err", err)
	m.unrecMu.Lock()
	defer m.unrecMu.Unlock()
	m.unrecorded[run.ThreadID] = end
	if !m.retrying {
		m.retrying = true
		go m.retryUnrecorded()
	}
}

func (m *Manager) record(end runEnd) error {
	f := store.Finish{Status: end.status, Error: end.errText, Output: end.record, Webhook: end.webhook}
	return m.runs.EndRun(context.Background(), end.runID, f, end.events)
}

// retryable reports whether recording a run's end failed because of the
// store rather than the request: the run is gone, or already ended.
func retryable(err error) bool {
	return !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrNotRunning) && !errors.Is(err, store.ErrInvalid)
}

// settle records the end of the thread's last run if the store could not
// record it when the run ended. It fails while the store still cannot.
func (m *Manager) settle(threadID string) error {
	m.unrecMu.Lock()
	end, ok := m.unrecorded[threadID]
	m.unrecMu.Unlock()
	if !ok {
		return nil
	}
	if err := m.record(end); err != nil && retryable(err) {
		// Whatever the store's trouble, it is the store's: the request
		// may be tried again (store.ErrUnavailable).
		return fmt.Errorf("the end of run %s on thread %s could not be recorded yet, so the thread cannot take a new run: %w: %w", end.runID, threadID, store.ErrUnavailable, err)
	}
	m.unrecMu.Lock()
	if m.unrecorded[threadID].runID == end.runID {
		delete(m.unrecorded, threadID)
	}
	m.unrecMu.Unlock()
	return nil
}

// settleAll is settle for every thread, and reports how many run ends are
// still unrecorded.
func (m *Manager) settleAll() int {
	m.unrecMu.Lock()
	threads := make([]string, 0, len(m.unrecorded))
	for id := range m.unrecorded {
		threads = append(threads, id)
	}
	m.unrecMu.Unlock()
	for _, id := range threads {
		if err := m.settle(id); err == nil {
			m.logger.Info("recorded the end of a run the store could not record before", "thread", id)
		}
	}
	m.unrecMu.Lock()
	defer m.unrecMu.Unlock()
	return len(m.unrecorded)
}

// retryUnrecorded retries the unrecorded run ends, backing off, until none
// is left or the manager shuts down.
func (m *Manager) retryUnrecorded() {
	delay := firstRetry
	for {
		select {
		case <-time.After(delay):
		case <-m.quit:
			m.unrecMu.Lock()
			m.retrying = false
			m.unrecMu.Unlock()
			return
		}
		if m.settleAll() == 0 {
			m.unrecMu.Lock()
			// A run that failed to record after settleAll looked finds
			// retrying still set and leaves the retry to this loop.
			if len(m.unrecorded) == 0 {
				m.retrying = false
				m.unrecMu.Unlock()
				return
			}
			m.unrecMu.Unlock()
		}
		delay = min(2*delay, maxRetry)
	}
}
