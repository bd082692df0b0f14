// Package planfirst is plan-first mode: on a route whose plan the harness
// owns, a run can ask the model for a whole plan of steps first, run the
// steps in their dependency order (several at once), and then let the agent
// write the answer from their results. Its engine lives in
// internal/planfirst; an app needs only Marker, which the built-in registry
// (markers.All, and so dawn.Main) already holds, and the names below.
//
// It is switched on in files, not code:
//
//   - plan.md front matter: mode (off, auto, always), parallel (1 to 16),
//     approval: required, advance: manual;
//   - dawn.yaml: plan_first: {mode, threshold, parallel}, the app's
//     default for routes whose plan.md sets none;
//   - a run's body: "plan_first": "off|auto|always|preview".
//
// A plan a person must approve parks the run on an interrupt of kind
// PlanKind; under advance: manual each finished step parks on StepKind.
// The plan's shape, placeholders, order and the answers a resume takes are
// in the manual, docs/plan-first.md.
package planfirst
