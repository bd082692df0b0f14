// Package runs is the threads-and-runs service below every wire: the
// rules of a run that hold whichever wire asked for it. It admits runs
// on their thread (one run per thread, the multitask strategies, the
// queue), stops and rolls back runs here or on another replica, and
// keeps ownership: every read and change of a thread, a run, a cron or
// an item answers another user's as one that does not exist.
//
// It speaks Dawn's own types (runner requests, store records), never a
// wire's: it imports neither echo nor any package under internal/server.
package runs
