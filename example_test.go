package dawn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/capabilities"
)

// wordCount is the input of countWords. The JSON Schema the model sees is
// derived from it; the jsonschema tag is the field's description.
type wordCount struct {
	Text string `json:"text" jsonschema:"the text to count the words of"`
}

// countWords counts the words of a text.
func countWords(ctx context.Context, in wordCount) (map[string]int, error) {
	return map[string]int{"words": len(strings.Fields(in.Text))}, nil
}

// A tool shared by every route is a typed Go function. The model sees its
// name, description and an input schema derived from the input type; input
// is validated against it before the function runs.
func ExampleTool() {
	tools := dawn.Tools(dawn.Tool("countWords", "Count the words of a text.", countWords))
	spec := tools[0].Tool.Spec()
	fmt.Println(spec.Name, "-", spec.Description)
	fmt.Println(string(spec.Schema))

	out, err := tools[0].Tool.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(`{"text":"hello brave new world"}`)})
	fmt.Println(string(out.Output), err)
	_, err = tools[0].Tool.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(`{"text":3}`)})
	fmt.Println(err)
	// Output:
	// countWords - Count the words of a text.
	// {"type":"object","properties":{"text":{"type":"string","description":"the text to count the words of"}},"required":["text"],"additionalProperties":false}
	// {"words":4} <nil>
	// invalid input for tool "countWords": validating root: validating /properties/text: type: 3 has type "integer", want "string"
}

// accountQuery is the input of lookupAccount.
type accountQuery struct {
	Email string `json:"email"`
}

// lookupAccount answers for the tenant of the route it runs on.
func lookupAccount(ctx context.Context, q accountQuery) (string, error) {
	return q.Email + " is on the " + dawn.Param(ctx, "tenant") + " business plan", nil
}

// A tool for one route is registered with the route's id; Param reads the
// route's dynamic segments of the request, here tenant=acme for
// /support/acme.
func ExampleRouteTool() {
	tools := dawn.Tools(dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up a customer's account by email.", lookupAccount))
	fmt.Println(tools[0].Route, tools[0].Tool.Spec().Name)

	inv := capabilities.Invocation{
		RouteID: "/support/[tenant]",
		Params:  map[string]string{"tenant": "acme"},
		Input:   json.RawMessage(`{"email":"ann@acme.com"}`),
	}
	out, err := tools[0].Tool.Call(context.Background(), inv)
	fmt.Println(string(out.Output), err)
	// Output:
	// /support/[tenant] lookupAccount
	// "ann@acme.com is on the acme business plan" <nil>
}

// Param returns "" outside a tool call, and for a name the route does not
// have.
func ExampleParam() {
	ctx := capabilities.WithInvocation(context.Background(), capabilities.Invocation{Params: map[string]string{"tenant": "acme"}})
	fmt.Printf("%q %q %q\n", dawn.Param(ctx, "tenant"), dawn.Param(ctx, "region"), dawn.Param(context.Background(), "tenant"))
	// Output: "acme" "" ""
}

// An app's main package passes its tools (and capabilities of its own) to
// Main; the binary then is the dawn CLI for the app: `go run . dev` serves
// it, `go run . check` checks it. A test loads the app with the same list
// through dawn.Tools (see dawntest).
func ExampleMain() {
	options := []dawn.Option{
		dawn.Tool("countWords", "Count the words of a text.", countWords),
		dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up a customer's account by email.", lookupAccount),
	}
	dawn.Main(options...)
}
