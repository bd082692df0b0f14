// Package dawn is the package app authors import. An app with Go tools has a
// main package that calls Main with its tools; that binary then is the dawn
// CLI for the app (dev, start, routes, check, typegen, run).
//
//	func main() {
//		dawn.Main(
//			dawn.Tool("now", "The current time.", now),
//			dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up an account.", lookup),
//			dawn.WithCapability(notes.Marker()),
//		)
//	}
package dawn

import (
	"context"
	"encoding/json"
	"net/http"
	"os"

	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/cli"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/planning"
)

// Option configures Main; make one with Tool, RouteTool, WithTool or
// WithCapability. Its fields are private so that what Main does with it
// can change without breaking apps.
type Option struct {
	apply func(*options)
}

// options is what Options set.
type options struct {
	tools     []capabilities.AppTool
	markers   []capabilities.Marker
	auth      func(*http.Request) (Identity, error)
	verifiers map[string]harness.VerifierFunc
	// constraints are ConstrainTool's, by tool name.
	constraints map[string][]approval.Constraint
}

// addTool returns the Option that registers t.
func addTool(t capabilities.AppTool) Option {
	return Option{apply: func(o *options) { o.tools = append(o.tools, t) }}
}

// collect applies opts in order.
func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt.apply != nil {
			opt.apply(&o)
		}
	}
	return o
}

// Tool registers a tool shared by every route. Its input schema is derived
// from In; input is validated against it before fn runs.
func Tool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Option {
	return addTool(capabilities.AppTool{Tool: capabilities.Func(name, description, fn)})
}

// RouteTool registers a tool for one route id, such as "/support/[tenant]".
func RouteTool[In, Out any](route, name, description string, fn func(ctx context.Context, in In) (Out, error)) Option {
	return addTool(capabilities.AppTool{Tool: capabilities.Func(name, description, fn), Route: route})
}

// WithTool registers a hand-written capabilities.Tool, shared by every route
// or (with a non-empty route) scoped to one.
func WithTool(route string, t capabilities.Tool) Option {
	return addTool(capabilities.AppTool{Tool: t, Route: route})
}

// WithCapability registers a capability marker of the app's own, written
// in any package or module (see capabilities.Marker). It runs after the
// built-in capabilities, in the order the options give, and reaches the
// runtime as they do: detected beside agent.md, through its contribution
// and its optional interfaces.
func WithCapability(m capabilities.Marker) Option {
	return Option{apply: func(o *options) { o.markers = append(o.markers, m) }}
}

// VerifyInput is what a Verifier is given: the route, the plan item (or
// postcondition) it checks, the model's own evidence, and the thread's
// state.
type VerifyInput = harness.VerifyInput

// Verdict is a Verifier's answer: Pass, and Detail, a line saying what it
// found, kept as evidence and shown to the model when the check fails.
type Verdict = harness.Verdict

// Verifier registers a Go verifier named name. A harness-owned plan.md
// names it in a nested bullet under an item or postcondition,
// "- verify: name", and the harness runs fn when the model marks the item
// completed (or calls verifyPostcondition): a pass is the item's evidence,
// a fail (or an error) keeps it in progress with Detail as the reason (see
// docs/harness.md). fn runs under the plan's verify_timeout.
func Verifier(name string, fn func(ctx context.Context, in VerifyInput) (Verdict, error)) Option {
	return Option{apply: func(o *options) {
		if o.verifiers == nil {
			o.verifiers = map[string]harness.VerifierFunc{}
		}
		o.verifiers[name] = fn
	}}
}

// WithAuth installs the app's own authentication: dawn start calls fn for
// every request but the probes (/healthz, /readyz) and CORS preflights,
// in place of dawn.yaml's auth.jwt. The identity it returns is the
// request's (IdentityFrom in tools; a user's threads are their own); an
// error answers 401 unauthorized with its text. DAWN_API_KEY, when set,
// is still the service credential, checked before fn (see docs/auth.md).
func WithAuth(fn func(*http.Request) (Identity, error)) Option {
	return Option{apply: func(o *options) { o.auth = fn }}
}

// Idempotent declares the tools opt registers idempotent: running a call
// again with the same input does no more than the first run did. An
// approved call of such a tool that a crash cut off runs again after the
// restart; any other tool's is reported to the model as started with an
// unknown outcome (see docs/approval.md).
//
//	dawn.Idempotent(dawn.Tool("lookupOrder", "Look up an order.", lookup))
func Idempotent(opt Option) Option {
	return Option{apply: func(o *options) {
		var inner options
		if opt.apply != nil {
			opt.apply(&inner)
		}
		for _, t := range inner.tools {
			t.Tool = capabilities.Idempotent(t.Tool)
			o.tools = append(o.tools, t)
		}
	}}
}

// Param returns the route parameter name of the route running the current
// tool call ("tenant" → "acme"), or "".
func Param(ctx context.Context, name string) string {
	inv, ok := capabilities.InvocationFrom(ctx)
	if !ok {
		return ""
	}
	return inv.Params[name]
}

// Identity is who sent the request a run serves (see docs/auth.md).
type Identity = capabilities.Identity

// IdentityFrom returns the identity of the caller whose request started
// the current run, for a tool call; ok is false when the server has no
// authentication.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	return capabilities.IdentityFrom(ctx)
}

// Store returns the app's key-value store for the current tool call: JSON
// objects under a namespace and a key, kept in the app's store (SQLite or
// Postgres) across threads and replicas, and served to clients as the
// LangGraph Store API (see docs/store.md). It is nil outside a tool call
// that a run hosts.
func Store(ctx context.Context) capabilities.ItemStore {
	inv, ok := capabilities.InvocationFrom(ctx)
	if !ok {
		return nil
	}
	return inv.Items
}

// Tools returns the tools opts register, as app.Load and dawntest take
// them, so a test can load the app with the same tools its main passes to
// Main.
func Tools(opts ...Option) []capabilities.AppTool {
	return collect(opts).tools
}

// Capabilities returns the capability markers of an app that passes opts
// to Main, in run order: the built-in ones, then those WithCapability
// registers. dawntest.Options.Markers takes them, so a test runs the app
// with the capabilities its main registers.
func Capabilities(opts ...Option) []capabilities.Marker {
	o := collect(opts)
	all := markers.All()
	if len(o.verifiers) > 0 {
		for i, m := range all {
			if m.Name() == planning.Name {
				all[i] = planning.MarkerWith(o.verifiers)
			}
		}
	}
	return append(approval.Constrain(all, o.constraints), o.markers...)
}

// Decision is what a constraint (ConstrainTool) decides of one tool call:
// Allow, Deny or Escalate. The zero Decision allows.
type Decision = approval.Decision

// Allow runs the call.
func Allow() Decision { return Decision{Outcome: approval.Run} }

// Deny skips the call; the model gets reason as the call's result and the
// run goes on.
func Deny(reason string) Decision { return Decision{Outcome: approval.Refuse, Reason: reason} }

// Escalate parks the run until a person answers, as a call of a tool
// under approve: does (an interrupt of kind tool, whose detail carries
// reason): once, always (the tool runs unasked for that person from then
// on), deny, or an edit of the arguments. The permissions mode applies:
// non-interactive denies the call, bypass runs it.
func Escalate(reason string) Decision { return Decision{Outcome: approval.Ask, Reason: reason} }

// ConstrainTool decides each call of the tool name from its arguments
// before it runs: fn allows it, denies it with a reason the model sees, or
// escalates it to a person. ctx is the call's (Param, Store and
// IdentityFrom work in it). An error or a panic of fn denies the call.
// Several constraints of one tool all judge each call: the first deny
// wins, and any escalation asks. The constraint holds on every route that
// has the tool, the app's tools and the capabilities' alike, and comes
// after permissions.deny.tool and before approve: (a tool it constrains is
// not asked about again for approve:).
func ConstrainTool(name string, fn func(ctx context.Context, args json.RawMessage) (Decision, error)) Option {
	return Option{apply: func(o *options) {
		if o.constraints == nil {
			o.constraints = map[string][]approval.Constraint{}
		}
		o.constraints[name] = append(o.constraints[name], fn)
	}}
}

// Main runs the dawn CLI with the app's tools and capabilities and exits
// with its status.
func Main(opts ...Option) {
	o := collect(opts)
	os.Exit(cli.Run(os.Args[1:], cli.Config{Tools: o.tools, ToolsKnown: true, Markers: Capabilities(opts...), Auth: o.auth}))
}
