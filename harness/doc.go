// Package harness is the plan the harness owns rather than trusts: its
// lifecycle (draft, running, paused, done, failed, cancelled), items with
// evidence and attempts, postconditions, revisions, the auto-advance budget,
// the retry cap and the finalization gate, as pure functions on a Plan value.
// With advance: manual a plan pauses after each finished item, and a
// person's step decision (continue, skip, revise, cancel; see DecideStep)
// sets it going again: planning parks the run on a "step" interrupt for it.
//
// Planning wires the plan into routes (plan.md with enforce: true). FanOut
// runs a parallel plan's items (mode: parallel) through the
// capabilities.StepRunner the runtime lends a route's tools. Marker
// is the harness's entry in the markers registry: the supervisor's HTTP
// routes, the keys it stores on messages and its notes for the offline
// model, reached through capabilities' optional interfaces.
package harness
