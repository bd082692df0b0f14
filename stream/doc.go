// Package stream owns run events: their types, the SSE encoding and decoding,
// subagent forwarding (the "subagent." prefix), and the per-run log that fans
// events out to any number of subscribers without ever blocking the run.
package stream
