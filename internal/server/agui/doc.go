// Package agui is the AG-UI wire of Dawn's HTTP API: POST /agui/{routeKey}
// takes an AG-UI RunAgentInput, runs the newest user message (or answers
// the parked thread's interrupts from its resume) on the thread its
// threadId names, through the same runner as Dawn's runs/stream, and
// answers with the run's events translated to AG-UI events, sent as
// "data: {json}" server-sent events.
//
// It owns that translation (stream.go): text messages, tool calls, the
// run's end, and the AG-UI shared state, which mirrors the route's state
// fields (STATE_SNAPSHOT, then STATE_DELTA). It mounts on a wire.Host.
package agui
