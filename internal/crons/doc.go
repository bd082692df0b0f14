// Package crons runs stored crons on their schedule: it parses five-field
// schedules in a time zone (Parse), and its Scheduler finds due ticks in
// the store, claims each so that one process of all those sharing the
// database fires it, and starts the tick's run through a Starter. It
// imports the store, not the server or any wire: the wire that keeps
// crons (the LangGraph dialect) is the Starter.
package crons
