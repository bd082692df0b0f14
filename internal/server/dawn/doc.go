// Package dawn is Dawn's own wire of the HTTP API: runs (runs/wait,
// runs/stream and their rejoin), threads (create, delete, list runs,
// cancel, resume), webhook deliveries, remembered decisions, the audit
// log, forgetting a user and the route list. Its handlers are the
// default handlers of the paths it shares with the LangGraph dialect
// (wire.Mux's Default): the core serves them every request no other wire
// claims.
//
// It translates HTTP to the runs service (internal/runs) through the
// seams of wire.Host, and decides nothing of a run or an owner; it
// imports no other wire and not the server core (internal/server).
package dawn
