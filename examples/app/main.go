// Command app is the example app's own dawn binary: the stock CLI plus the
// Go tools this app registers. `dawn dev --app examples/app` builds and runs
// it for you; `go run ./examples/app dev --app examples/app` does the same by
// hand.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn"
)

// accountQuery is the input of lookupAccount.
type accountQuery struct {
	Email string `json:"email" jsonschema:"the customer's email address"`
}

// account is what lookupAccount returns.
type account struct {
	Tenant string `json:"tenant"`
	Email  string `json:"email"`
	Plan   string `json:"plan"`
	Seats  int    `json:"seats"`
	Status string `json:"status"`
}

// lookupAccount reads an account from a small built-in table, so the example
// needs no database.
func lookupAccount(ctx context.Context, q accountQuery) (account, error) {
	tenant := dawn.Param(ctx, "tenant")
	email := strings.ToLower(strings.TrimSpace(q.Email))
	if email == "" {
		return account{}, fmt.Errorf("email is empty; ask the customer for the address on the account")
	}
	plan, seats := "starter", 3
	if strings.HasSuffix(email, "@"+tenant+".com") {
		plan, seats = "business", 25
	}
	return account{Tenant: tenant, Email: email, Plan: plan, Seats: seats, Status: "active"}, nil
}

// changesQuery is the input of releaseChanges.
type changesQuery struct {
	Since string `json:"since" jsonschema:"the release tag to list changes since, such as v1.3.0"`
}

// releaseChanges lists the changes since a release tag, from a small
// built-in history, so the example needs no repository. The /release
// route's plan verifies two items with it.
func releaseChanges(_ context.Context, q changesQuery) ([]string, error) {
	if q.Since != "v1.3.0" {
		return nil, fmt.Errorf("no release is tagged %q; the last one is v1.3.0", q.Since)
	}
	return []string{"Faster plan rendering", "Verified plan items", "A fix for long tool outputs"}, nil
}

// namesItem is a plan verifier: it passes when the model's evidence for
// an item names the item it finished, so "done" alone is not enough.
func namesItem(_ context.Context, in dawn.VerifyInput) (dawn.Verdict, error) {
	if !strings.Contains(strings.ToLower(in.Claim), strings.ToLower(in.Item)) {
		return dawn.Verdict{Detail: fmt.Sprintf("the evidence %q does not name the item %q", in.Claim, in.Item)}, nil
	}
	return dawn.Verdict{Pass: true, Detail: "the evidence names the item"}, nil
}

// options are the app's Go tools. main passes them to dawn.Main; the tests
// load the app with the same list.
func options() []dawn.Option {
	return []dawn.Option{
		dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up a customer's account (plan, seats, status) by email.", lookupAccount),
		dawn.RouteTool("/release", "releaseChanges", "List the changes since a release tag.", releaseChanges),
		dawn.Verifier("namesItem", namesItem),
	}
}

func main() {
	dawn.Main(options()...)
}
