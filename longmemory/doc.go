// Package longmemory is the long-term memory capability: a route whose
// agent.md says memory: gets the tools remember and recall, which keep
// and search memories in the app's key-value store (the one the LangGraph
// Store API serves), under the namespace ["memories", route id], so what
// one thread remembers every later thread of the route can recall. With
// approve_replace, a remember that would replace a memory kept under the
// same key parks the run with an interrupt of kind memory until a person
// approves or rejects it.
//
// It imports the capability API and no server, store or model code.
package longmemory
