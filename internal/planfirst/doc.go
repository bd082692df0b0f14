// Package planfirst is the engine of plan-first mode: a planner model
// writes a whole plan as JSON before the agent loop, the harness runs its
// steps in a fixed order, and the results reach the agent as one report.
// Apps see it through the public package planfirst, which hands out Marker;
// it imports capabilities and the packages below it, never the runtime.
//
// The plan logic is pure functions on values. Marker is plan-first's entry
// in the markers registry: it reads dawn.yaml's plan_first section
// (capabilities.ConfigSection), runs a route plan-first when asked
// (capabilities.RunStrategy, over the runtime's RunHost) and answers its own
// directive on the offline model (capabilities.OfflineScript).
//
// # The flow
//
// When ShouldPlan says so, the caller sends Directive(task, routes,
// subagents) to the planner model and passes the answer to Parse. If Parse
// (or CheckTargets) fails, Feedback(err) goes back to the model once; a
// second failure ends the run with the error. A preview, and any plan of a
// route whose plan.md says approval: required, stops here: the run parks
// on a "plan" interrupt whose detail is PreviewData (a preview also shows
// Preview), and the marker's Resume (capabilities.StrategyResumer) takes a
// person's approve, edit or reject without asking the planner again.
// Otherwise Execute runs the steps through
// a Runner, which dispatches each to its route, its subagent, or the current
// agent. The Observer sees every step start and finish, which is where the
// caller emits plan_update events and checks for pause or cancel; returning
// ErrStop stops between steps, and Resume picks up later. Under
// advance: manual the run parks on a "step" interrupt (StepDetail) after
// each finished step, with the ended steps' results as its park data; the
// marker's Resume takes continue, skip or cancel and runs the steps left
// from them. Messages then
// gives the agent the plan (as an assistant turn) and Report.Text (as a user
// turn), and the agent writes the final answer.
//
// # Plans
//
// A plan is {"goal": "…", "steps": [{"id", "task", "deps", "route" or
// "subagent"}]} with 1 to MaxSteps steps. Ids are unique, start with a
// letter and hold letters, digits, '_' and '-'. Deps may name only earlier
// steps in the list, so a plan cannot have a cycle. Validate explains every
// problem at once, in sentences the model can act on.
//
// # Execution order
//
// Steps run in a topological order of their deps; when several steps are
// ready, the one written first goes first. Ids play no part: lexical order
// would run E10 before E2, and natural order suits only one naming scheme,
// while the planner's own order always exists and is what the model meant. Because deps only point backwards, a valid plan runs exactly
// in the order it is written.
//
// # Placeholders
//
// A task can use the output of an earlier step:
//
//	#E1          the whole output, trimmed
//	#E1.summary  its first non-empty line
//	#E1.head=N   its first N runes, then "…" if there were more
//	#E1.last=N   "…" if there were more, then its last N runes
//
// N is 1 to MaxCount. The id is the longest run of id characters after '#',
// minus any trailing '-' or '_'. A suffix begins only where a '.' is
// directly followed by a lowercase letter, so "see #E1." is #E1 and a full
// stop, while "#E1.foo" is an error. A '#' right after a letter, digit or
// '_' (C#, issue#4) starts nothing. "#word" is a placeholder when word is a
// step id of the plan or looks like one (letters then digits, like E7);
// other words, like "#general", stay text. A placeholder to an earlier step
// makes it a dependency even if deps leaves it out. A failed step's
// placeholders become "[step E1 failed: …]" and the steps after it still run.
//
// # When to plan first
//
// Mode is off, auto or always, per app and per route. Auto plans first when
// ComplexityScore(task) reaches the threshold (DefaultThreshold, 6). The
// score adds three capped counts: action verbs (up to 5), file names (up to
// 3) and sequencing words such as "then" and "finally" (up to 2). A question
// scores near 0; "fix x.go, then update README.md and run the tests" scores
// well above 6.
package planfirst
