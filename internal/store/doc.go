// Package store keeps threads, runs, messages, the latest checkpoint of each
// thread and run events. Its logic (run lifecycle, steps, state parts,
// search, leases, recovery, app values) is written once here, over the
// seam of package dialect; package sqlite (an embedded file, the default)
// and package postgres (a database several servers share) hold only their
// SQL, types, locking and notification. Open picks one by its name.
// Any number of stores, in one process or several, may share a database:
// each is an owner holding a lease on the runs it starts (owners.go), and
// RecoverInterrupted takes only the runs of owners that are gone.
package store
