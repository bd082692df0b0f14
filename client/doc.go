// Package client is Dawn's HTTP client of the run API: threads,
// runs/wait, runs/stream (SSE), rejoining a stream with Last-Event-ID,
// resume, state, cancel and the plan, with error answers decoded into an
// *APIError, and the data of the stream's events. dawn run --url, dawntest,
// the load tool and the typed client `dawn typegen` writes for an app all
// use it.
package client
