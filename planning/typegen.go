package planning

import "github.com/dawn-go/dawn/capabilities"

// todoDoc is the doc comment of the generated Todo type.
const todoDoc = "Todo is one item of a route's plan: the todos state field of a route with a plan.md, the input of its writeTodos tool and the data of plan_update events."

// TypegenTypes contributes Todo, the type of one todo (the schema of the
// writeTodos items, so the two never drift apart), with its statuses, to
// the code `dawn typegen` writes for every app.
func (marker) TypegenTypes() []capabilities.TypegenType {
	return []capabilities.TypegenType{{
		Name:      "Todo",
		Doc:       todoDoc,
		Schema:    mustJSON(todoSchema()),
		ConstsDoc: "Statuses of a Todo.",
		Consts: []capabilities.TypegenConst{
			{Name: "StatusPending", Value: string(Pending)},
			{Name: "StatusInProgress", Value: string(InProgress)},
			{Name: "StatusCompleted", Value: string(Completed)},
		},
	}}
}
