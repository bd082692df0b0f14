// Package a2a is the A2A (Agent2Agent protocol 0.3) wire of Dawn's HTTP
// API: every route that runs on its own is an A2A agent, with an agent
// card and a JSON-RPC endpoint under /a2a/{route}. A contextId is a thread
// and a task is a run (with the runs that resume it), owned by the caller
// as on every other wire.
//
// It owns the translation between A2A's messages, tasks and events and
// Dawn's runs, and mounts on its own Host, the few methods of the core it
// calls; it imports no other wire, and the runtime names none of it.
package a2a
