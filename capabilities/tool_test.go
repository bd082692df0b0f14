package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type lookupInput struct {
	Query string `json:"query" jsonschema:"what to look up"`
	Limit int    `json:"limit,omitempty"`
}

type lookupOutput struct {
	Tenant string   `json:"tenant"`
	CallID string   `json:"call_id"`
	Hits   []string `json:"hits"`
}

func lookupTool(called *bool) Tool {
	return Func("lookup", "Look up an account.", func(ctx context.Context, in lookupInput) (lookupOutput, error) {
		*called = true
		inv, ok := InvocationFrom(ctx)
		if !ok {
			return lookupOutput{}, errors.New("no invocation in context")
		}
		if in.Query == "fail" {
			return lookupOutput{}, errors.New("lookup service is down")
		}
		return lookupOutput{Tenant: inv.Params["tenant"], CallID: inv.CallID, Hits: []string{in.Query}}, nil
	})
}

func TestFuncSpec(t *testing.T) {
	var called bool
	spec := lookupTool(&called).Spec()
	if spec.Name != "lookup" || spec.Description != "Look up an account." {
		t.Errorf("spec = %+v", spec)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(spec.Schema, &schema); err != nil {
		t.Fatalf("schema %s: %v", spec.Schema, err)
	}
	if schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "query" {
		t.Errorf("schema = %s", spec.Schema)
	}
	if schema.Properties["query"]["type"] != "string" || schema.Properties["query"]["description"] != "what to look up" {
		t.Errorf("query property = %v", schema.Properties["query"])
	}
	if schema.Properties["limit"]["type"] != "integer" {
		t.Errorf("limit property = %v", schema.Properties["limit"])
	}
}

func TestFuncCall(t *testing.T) {
	tests := []struct {
		name       string
		input      string
		wantOutput string
		wantInput  string // substring of an *InputError's message
		wantErr    string // exact message of another error
	}{
		{name: "valid", input: `{"query":"acme","limit":2}`, wantOutput: `{"tenant":"acme","call_id":"call_1","hits":["acme"]}`},
		{name: "missing required", input: `{"limit":2}`, wantInput: "query"},
		{name: "wrong type", input: `{"query":7}`, wantInput: "query"},
		{name: "not JSON", input: `{"query":`, wantInput: "input is not valid JSON"},
		{name: "empty input means {}", input: ``, wantInput: "query"},
		{name: "tool error passes through", input: `{"query":"fail"}`, wantErr: "lookup service is down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var called bool
			inv := Invocation{CallID: "call_1", RouteID: "/support/[tenant]", Params: map[string]string{"tenant": "acme"}, Input: json.RawMessage(tt.input)}
			res, err := lookupTool(&called).Call(context.Background(), inv)
			switch {
			case tt.wantInput != "":
				checkLookupInputError(t, err, tt.wantInput, called)
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %s", err, tt.wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if string(res.Output) != tt.wantOutput {
					t.Errorf("output = %s, want %s", res.Output, tt.wantOutput)
				}
				if res.Update != nil {
					t.Errorf("update = %v, want none", res.Update)
				}
			}
		})
	}
}

// checkLookupInputError checks that err is the lookup tool's input error
// about want, and that the tool's function did not run.
func checkLookupInputError(t *testing.T, err error, want string, called bool) {
	t.Helper()
	var inputErr *InputError
	if !errors.As(err, &inputErr) {
		t.Fatalf("error = %v, want an *InputError", err)
	}
	if inputErr.Tool != "lookup" || !strings.Contains(inputErr.Msg, want) {
		t.Errorf("InputError = %+v, want one about %q", inputErr, want)
	}
	if !strings.HasPrefix(err.Error(), `invalid input for tool "lookup": `) {
		t.Errorf("message = %q", err)
	}
	if called {
		t.Error("the function ran on invalid input")
	}
}

func TestFuncPanicsOnUnschemableInput(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), `capabilities.Func "bad"`) {
			t.Errorf("recover() = %v, want a panic naming the tool", r)
		}
	}()
	Func("bad", "", func(context.Context, chan int) (string, error) { return "", nil })
}

func TestInvocationFromEmptyContext(t *testing.T) {
	if _, ok := InvocationFrom(context.Background()); ok {
		t.Error("InvocationFrom found an invocation in an empty context")
	}
}
