package dawntest_test

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
)

type accountQuery struct {
	Email string `json:"email"`
}

// lookupAccount is the app's Go tool.
func lookupAccount(ctx context.Context, q accountQuery) (map[string]string, error) {
	return map[string]string{"email": q.Email, "plan": "business", "tenant": dawn.Param(ctx, "tenant")}, nil
}

// A test serves the app folder with a scripted model and runs a route
// over HTTP: here the model calls the app's tool, writes the plan, then
// answers. In a test, t is the test's *testing.T.
func ExampleNew() {
	t, end := exampleT()
	defer end()

	model := dawntest.Script().
		CallTool("lookupAccount", map[string]any{"email": "ann@acme.com"}).
		CallTool("writeTodos", map[string]any{"todos": []map[string]string{
			{"content": "Find the account", "status": "completed"},
			{"content": "Answer", "status": "completed"},
		}}).
		Reply("Ann is on the business plan.")
	tools := dawn.Tools(dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up an account.", lookupAccount))
	srv := dawntest.New(t, "testdata/app", model, dawntest.Options{Tools: tools})

	res := srv.Run(t, "thread-1", "/support/acme", "Which plan is ann@acme.com on?")
	if res.Err != nil {
		fmt.Println("run failed:", res.Err)
		return
	}
	for _, e := range res.Events {
		switch e.Type {
		case "tool_result", "plan_update":
			fmt.Println(e.Type, string(e.Data))
		}
	}
	fmt.Println(res.Todos(t))
	fmt.Println(model.Calls(), "model calls")
	// Output:
	// tool_result {"id":"call_1_0","name":"lookupAccount","output":{"email":"ann@acme.com","plan":"business","tenant":"acme"}}
	// tool_result {"id":"call_2_0","name":"writeTodos","output":{"todos":[{"content":"Find the account","status":"completed"},{"content":"Answer","status":"completed"}]}}
	// plan_update {"todos":[{"content":"Find the account","status":"completed"},{"content":"Answer","status":"completed"}]}
	// [{Find the account completed} {Answer completed}]
	// 3 model calls
}
