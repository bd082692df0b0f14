package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// A run whose server stalled past its lease (a paused process, a long
// garbage collection, a network partition) may be continued by another
// server (ContinueOrphans) while this one still has it. When this server
// then saves a step or the end, the store refuses: the run is not this
// server's any more (store.ErrNotRunning). The run went on elsewhere, so
// this server records nothing and sends no webhook; it follows the run in
// the store to the end the other server records, and its waiters get that
// end as the run's, as a rejoin would show it.

// takenElsewhere reports whether err, from saving a step or the end of a
// run that was not cancelled here, says that the store no longer has the
// run as this server's.
func takenElsewhere(err error) bool { return errors.Is(err, store.ErrNotRunning) }

// adopt sets the run's outcome (output, error, cancelled) from the end
// the store records for it, following its events until the done event
// comes, and returns the done event this server's log ends with. A
// follow that ctx ends first (this server shuts down) or that the store
// cannot serve leaves the run with an error that may be retried
// (store.ErrUnavailable) and names the run.
func (x *execution) adopt(ctx context.Context) stream.Event {
	run := x.run
	x.m.logger.Warn("another server took over this run while this one stalled; following it to its end", "thread", run.ThreadID, "run", run.ID)
	done, err := x.m.storedDone(ctx, run.ID)
	next := stream.Event{ID: run.Log.LastID() + 1, Type: stream.TypeDone}
	if err != nil {
		run.err = fmt.Errorf("run %s on thread %s went on on another server, and this one could not follow it to its end (%v): rejoin its stream with GET /threads/%s/runs/%s/stream: %w",
			run.ID, run.ThreadID, err, run.ThreadID, run.ID, store.ErrUnavailable)
		run.output = mustJSON(map[string]string{"error": errorText(run.err)})
		next.Data = doneData(run.output)
		return next
	}
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(done.Data, &d)
	var ended struct {
		Error     string `json:"error"`
		Cancelled bool   `json:"cancelled"`
	}
	_ = json.Unmarshal(d.Output, &ended)
	run.output, run.err, run.cancelled = d.Output, nil, ended.Cancelled
	if ended.Error != "" && !ended.Cancelled {
		run.err = errors.New(ended.Error)
	}
	next.Data = done.Data
	return next
}

// storedDone follows run runID's events in the store until its done
// event, and returns that event.
func (m *Manager) storedDone(ctx context.Context, runID string) (stream.Event, error) {
	f := m.Follow(runID, 0)
	defer f.Close()
	var done stream.Event
	for {
		e, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			if done.Type != stream.TypeDone {
				return done, errors.New("its event log ended without a done event")
			}
			return done, nil
		}
		if err != nil {
			return done, err
		}
		if e.Type == stream.TypeDone {
			done = e
		}
	}
}
