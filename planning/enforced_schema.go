package planning

// The descriptions say what each tool does; the rules (one in_progress,
// evidence, when an answer is accepted) are said once, in the prompt
// section (harness.RenderFull and RenderCompact). All of it goes with every
// model request.
const enforcedToolDescription = `Replace the plan with the list you pass, in order, with a short reason for the change.`

const stepFailedDescription = `Report that the step in progress failed; next: retry, skip (go on), abort (end the plan) or revise (pause for the user).`

const verifyDescription = `Verify one "Done when" postcondition, by its index, with evidence that it holds.`

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
