package stream

// Emitter is where a run sends its events: the agent loop calls it once per
// event, in order. A run's Log provides one with its Emit method; a subagent's
// emitter wraps its parent's with Forward.
type Emitter func(Event)
