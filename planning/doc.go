// Package planning owns the plan.md capability marker: the seed parser, the
// full-replace writeTodos tool, the todos state field, the planning prompt
// fragment and the plan_update stream transformer.
//
// It imports capabilities, router, thread and stream; it must not import
// server, store, agent or model code.
package planning
