// Package server is Dawn's HTTP API on echo: health, routes, threads, runs
// (wait and SSE stream), cancel, and JSON errors of the form
// {"error":{"kind":"…","message":"…","details":{"code":"…"}}}.
//
// It owns HTTP only; runs are the runner's business.
package server
