// Package stream owns run events: their types, the SSE encoding and decoding,
// subagent forwarding (the "subagent." prefix), and the per-run log that fans
// events out to any number of subscribers without ever blocking the run.
//
// It imports only the standard library.
package stream
