// Package harness is the plan the harness owns rather than trusts: its
// lifecycle (draft, running, paused, done, failed, cancelled), items with
// evidence and attempts, postconditions, revisions, the auto-advance budget,
// the retry cap and the finalization gate, as pure functions on a Plan value.
//
// It imports only the standard library, yaml.v3 and todo; planning wires it
// into routes.
package harness
