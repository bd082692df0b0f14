package planning

const enforcedToolDescription = `Replace the plan with the list you pass. The harness owns this plan: it checks every change.

Pass every item each time (the list is replaced as a whole) and a short "reason" saying why you changed it. Statuses: pending, in_progress (exactly one at a time), completed, failed, skipped. When you mark an item completed, add "evidence": a short, checkable record that shows it is done (a tool result, an id, a number, a quote).

Example: {"reason":"account checked","todos":[{"content":"Check account context","status":"completed","evidence":"lookupAccount: plan=business"},{"content":"Write the final response","status":"in_progress"}]}`

const stepFailedDescription = `Report that the step in progress failed, and what to do next: "retry" (you have a different angle), "skip" (it cannot be done; go on), "abort" (the plan cannot succeed; stop) or "revise" (the plan itself needs rewriting; pause for the user). Give a reason.`

const verifyDescription = `Verify one "Done when" postcondition, by its index, with evidence: a short, checkable record that shows it holds.`

func enforcedItemSchema() map[string]any {
	item := todoSchema()
	props := item["properties"].(map[string]any)
	props["status"] = map[string]any{
		"type":        "string",
		"enum":        []string{string(Pending), string(InProgress), string(Completed), string(Failed), string(Skipped)},
		"description": "pending, in_progress (one at a time), completed (with evidence), failed or skipped.",
	}
	props["evidence"] = map[string]any{"type": "string", "description": "What shows the item is done: a tool result, an id, a quote."}
	return item
}

func enforcedListSchema() map[string]any {
	return map[string]any{"type": "array", "items": enforcedItemSchema()}
}

func enforcedInputSchema(maxItems int) map[string]any {
	list := enforcedListSchema()
	list["maxItems"] = maxItems
	list["description"] = "The whole plan, in order. It replaces the current list."
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			StateField: list,
			"reason":   map[string]any{"type": "string", "description": "Why you changed the plan."},
		},
		"required":             []string{StateField},
		"additionalProperties": false,
	}
}

func stepFailedSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"next":   map[string]any{"type": "string", "enum": []string{"retry", "skip", "abort", "revise"}},
			"reason": map[string]any{"type": "string", "description": "What went wrong."},
		},
		"required":             []string{"next", "reason"},
		"additionalProperties": false,
	}
}

func verifySchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"index":    map[string]any{"type": "integer", "minimum": 0, "description": "The postcondition's index (0 is the first)."},
			"evidence": map[string]any{"type": "string", "description": "What shows the postcondition holds."},
		},
		"required":             []string{"index", "evidence"},
		"additionalProperties": false,
	}
}
