package instructions_test

import (
	"fmt"

	"github.com/dawn-go/dawn/instructions"
)

func ExampleRender() {
	fmt.Print(instructions.Render([]instructions.Source{
		{Scope: "the whole app", File: "AGENTS.md", Text: "Answer in British English."},
		{Scope: "this route", File: "support/memory.md", Text: "Refunds over 100 EUR need a manager."},
	}))
	// Output:
	// ## Standing instructions
	//
	// The app's authors wrote these instructions; follow them on every turn.
	//
	// From AGENTS.md (the whole app):
	//
	// Answer in British English.
	//
	// From memory.md (this route):
	//
	// Refunds over 100 EUR need a manager.
}
