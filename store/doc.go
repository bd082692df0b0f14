// Package store keeps threads, runs, messages, the latest checkpoint of each
// thread and run events in an embedded SQLite database (modernc.org/sqlite).
// It imports only thread and stream: never server, agent, capabilities or model code.
package store
