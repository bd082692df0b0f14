package runs

import (
	"errors"

	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
)

// Service is the threads-and-runs service over one runner and its store.
// Its methods take the request's context, whose identity
// (ownership.Owner) decides what the caller may reach.
type Service struct {
	m *runner.Manager
	// The parts of the runner's store the service reads and keeps.
	threads store.Threads
	runs    store.Runs
	queue   store.Queue
	history store.History
	crons   store.Crons
	items   store.Items
	audit   store.AuditLog
	values  store.AppValues
	// cronStarter starts the runs of cron ticks, given by a wire.
	cronStarter crons.Starter
}

// New returns the service of the runs m manages.
func New(m *runner.Manager) *Service {
	st := m.Store()
	return &Service{m: m, threads: st, runs: st, queue: st, history: st, crons: st, items: st, audit: st, values: st}
}

// Runner is the runner the service starts runs on.
func (s *Service) Runner() *runner.Manager { return s.m }

// MaxClears bounds how often a run that interrupts (or rolls back) clears
// its thread again because another such run started there first, between
// its clearing and its start.
const MaxClears = 10

// Busy reports whether err refuses a run because its thread has one in
// flight, on this replica or another.
func Busy(err error) bool {
	return errors.Is(err, runner.ErrBusy) || errors.Is(err, store.ErrBusy)
}
