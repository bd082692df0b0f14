// Package dawn is the package app authors import. An app with Go tools has a
// main package that calls Main with its tools; that binary then is the dawn
// CLI for the app (dev, start, routes, check, typegen, run).
//
//	func main() {
//		dawn.Main(
//			dawn.Tool("now", "The current time.", now),
//			dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up an account.", lookup),
//		)
//	}
package dawn

import (
	"context"
	"os"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/cli"
)

// Option configures Main.
type Option func(*cli.Config)

// Tool registers a tool shared by every route. Its input schema is derived
// from In; input is validated against it before fn runs.
func Tool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Option {
	t := capabilities.Func(name, description, fn)
	return func(c *cli.Config) { c.Tools = append(c.Tools, capabilities.AppTool{Tool: t}) }
}

// RouteTool registers a tool for one route id, such as "/support/[tenant]".
func RouteTool[In, Out any](route, name, description string, fn func(ctx context.Context, in In) (Out, error)) Option {
	t := capabilities.Func(name, description, fn)
	return func(c *cli.Config) { c.Tools = append(c.Tools, capabilities.AppTool{Tool: t, Route: route}) }
}

// WithTool registers a hand-written capabilities.Tool, shared by every route
// or (with a non-empty route) scoped to one.
func WithTool(route string, t capabilities.Tool) Option {
	return func(c *cli.Config) { c.Tools = append(c.Tools, capabilities.AppTool{Tool: t, Route: route}) }
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

// Tools returns the tools opts register, as app.Load and dawntest take
// them, so a test can load the app with the same tools its main passes to
// Main.
func Tools(opts ...Option) []capabilities.AppTool {
	var cfg cli.Config
	for _, o := range opts {
		o(&cfg)
	}
	return cfg.Tools
}

// Main runs the dawn CLI with the app's tools and exits with its status.
func Main(opts ...Option) {
	cfg := cli.Config{ToolsKnown: true}
	for _, o := range opts {
		o(&cfg)
	}
	os.Exit(cli.Run(os.Args[1:], cfg))
}
