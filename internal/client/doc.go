// Package client is the one HTTP client of Dawn's run API inside this
// module: threads, runs/wait, runs/stream (SSE), rejoining a stream with
// Last-Event-ID, state, cancel and the plan, with error answers decoded into
// an *APIError. dawn run --url, the load tool and dawntest use it.
//
// It speaks the wire contract only: it imports stream for the SSE reader and
// event type, and nothing of the server or the runner. The generated typed
// client (typegen) follows the same shapes in the app's own module.
package client
