// Package planning owns the plan.md capability marker: the seed parser, the
// full-replace writeTodos tool, the todos state field, the planning prompt
// fragment and the plan_update stream transformer.
package planning
