// Package store keeps threads, runs, messages, the latest checkpoint of each
// thread and run events in an embedded SQLite database (modernc.org/sqlite).
// Any number of stores, in one process or several, may share a database:
// each is an owner holding a lease on the runs it starts (owners.go), and
// RecoverInterrupted takes only the runs of owners that are gone.
package store
