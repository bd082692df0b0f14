// Package runner starts and tracks runs: one run per thread at a time, each
// on its own goroutine detached from the request that started it, with its
// events in a stream.Log for any number of watchers and every step saved to
// the store in one transaction through the run's journal.
package runner
