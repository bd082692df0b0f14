// Package langgraph is the LangGraph Agent Server dialect of Dawn's HTTP
// API: the endpoints and bodies @langchain/langgraph-sdk (and its React
// useStream) speak, so they work unchanged against a Dawn app.
//
// It owns that wire, mounted on a wire.Host: assistants (every route is
// one, assistants.go), runs in the dialect (a run request that names
// assistant_id instead of route, and the background, stateless, join and
// cancel calls), threads' states, checkpoints and history as LangGraph
// shows them, in the shape Dawn's clients read too (state.go), LangChain
// message dicts (messages.go), interrupts and command.resume
// (interrupts.go), the translation of a run's Dawn events into stream
// parts by stream mode (stream.go), errors with LangGraph's "detail", and
// what it remembers of the runs it started.
package langgraph
