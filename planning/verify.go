package planning

import (
	"context"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
)

// hasVerifiers reports whether any item or postcondition of the route's
// plan.md has a verifier line.
func (e *enforced) hasVerifiers() bool {
	for _, s := range e.seed {
		if s.Verify != "" {
			return true
		}
	}
	for _, v := range e.settings.PostVerify {
		if v != "" {
			return true
		}
	}
	return false
}

// named reports whether the app registered a Go verifier called name.
func (e *enforced) named(name string) bool { return e.verifiers[name] != nil }

// runClaims runs the verifier of every item list completes that has one,
// one after another, and puts each outcome on the item for Replace.
func (e *enforced) runClaims(ctx context.Context, inv capabilities.Invocation, p *harness.Plan, list []harness.Proposed) {
	for _, c := range harness.Claims(p, list) {
		list[c.Index].Verdict = e.runCheck(ctx, inv, c.Verify, c.Content, list[c.Index].Evidence)
	}
}

// runCheck runs one verifier line for item, which the model claims done with
// claim.
func (e *enforced) runCheck(ctx context.Context, inv capabilities.Invocation, line, item, claim string) *harness.Verification {
	c, err := harness.ParseCheck(line, e.named)
	if err != nil { // checkLines refused such a plan.md at load; kept for safety
		return &harness.Verification{VerifiedBy: line, Output: err.Error()}
	}
	k := harness.Checker{Tools: inv.Tools, Verifiers: e.verifiers, Timeout: e.settings.VerifyTimeout}
	return k.Run(ctx, c, harness.VerifyInput{RouteID: inv.RouteID, Params: inv.Params, Item: item, Claim: claim, State: inv.State})
}

// checkLines refuses a plan.md whose verifier lines do not parse, naming
// the file and the item.
func checkLines(path string, f File, verifiers map[string]harness.VerifierFunc) error {
	var errs []error
	named := func(n string) bool { return verifiers[n] != nil }
	each(f, func(what, line string) {
		if _, err := harness.ParseCheck(line, named); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %v", path, what, err))
		}
	})
	return errors.Join(errs...)
}

// each calls fn for every verifier line of f with what it checks.
func each(f File, fn func(what, line string)) {
	for i, v := range f.Verify {
		if v != "" {
			fn(fmt.Sprintf("item %d %q", i+1, f.Seed[i].Content), v)
		}
	}
	for i, v := range f.Settings.PostVerify {
		if v != "" {
			fn(fmt.Sprintf("postcondition %d %q", i, f.Settings.Postconditions[i]), v)
		}
	}
}

// validate checks, once the route is prepared with every tool, that each
// verifier can run: a tool verifier's tool is the route's, and a command
// verifier has the sandbox's runBash to run in.
func (e *enforced) validate(p *capabilities.Prepared) []string {
	var out []string
	f := File{Settings: e.settings}
	for _, s := range e.seed {
		f.Seed = append(f.Seed, Todo{Content: s.Content})
		f.Verify = append(f.Verify, s.Verify)
	}
	each(f, func(what, line string) {
		c, err := harness.ParseCheck(line, e.named)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("plan.md %s: %v", what, err))
		case c.Kind == harness.CheckTool && p.Tool(c.Name) == nil:
			out = append(out, fmt.Sprintf("plan.md %s: verify: tool %s names no tool of this route; register it (dawn.Tool, an MCP server in dawn.yaml) or list it in agent.md tools:", what, c.Name))
		case c.Kind == harness.CheckCommand && p.Tool(harness.BashTool) == nil:
			out = append(out, fmt.Sprintf("plan.md %s: verify: %s is a command, and this route has no sandbox to run it in (%s); give the route workspace: in agent.md and a sandbox: in dawn.yaml, or, if %q is meant to be a Go verifier, register it with dawn.Verifier", what, c.Command, harness.BashTool, c.Command))
		}
	})
	return out
}
