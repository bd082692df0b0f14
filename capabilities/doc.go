// Package capabilities owns capability markers: files beside agent.md that
// switch features on. It defines the Marker interface, what a marker
// contributes (tools, state fields, prompt fragments, stream transformers),
// and Prepare, which runs markers in order for a route and checks conflicts.
// The optional interfaces (ConfigSection, TypegenContributor, HTTPRoutes,
// RunStrategy, StrategyResumer, WorkerFilter, MessageMetadata,
// OfflineScript, OfflineScripter, StateMirror, RouteDetector, WorkerPrompter)
// are how the runtime reaches a capability without naming it.
package capabilities
