// Package agent runs one route's agent loop over a langchaingo llms.Model:
// it renders the system prompt with every capability fragment each turn,
// dispatches tool calls (route tools, capability tools and the reserved
// "task" tool for subagents), applies state updates through reducers, and
// emits stream events. A run goes through named phases (resume or start,
// then turns, final and finish; see Run). What the loop needs from its
// caller (events, checkpoints, signals, subagents) it asks of one Host;
// persistence and HTTP are the caller's business.
package agent
