// Package dawntest helps app authors test routes, in the spirit of httptest:
// a scripted model, and New, which serves an app folder on a loopback port
// and runs routes through the HTTP API as any client does.
// It is for tests: production code must not import it.
//
// A scripted model answers each model turn with the next step of its script:
//
//	m := dawntest.Script().
//		CallTool("writeTodos", map[string]any{"todos": todos}).
//		Reply("All done.")
//
// and records what every turn received, for assertions:
//
//	srv := dawntest.New(t, "./app", m, dawntest.Options{})
//	res := srv.Run(t, "thread-1", "/support/acme", "Help me")
//	todos := res.Todos(t)
package dawntest
