// Package store keeps threads, runs, messages, checkpoints and run events in
// an embedded SQLite database (modernc.org/sqlite, pure Go).
// It imports only thread and stream: never server, agent, capabilities or model code.
package store
