// Package dawntest helps app authors test routes, in the spirit of httptest:
// a scripted model and helpers to run a route in-process. It is for tests:
// production code must not import it.
//
// A scripted model answers each model turn with the next step of its script:
//
//	m := dawntest.Script().
//		CallTool("writeTodos", map[string]any{"todos": todos}).
//		Reply("All done.")
//
// and records what every turn received, for assertions.
package dawntest
