// Package plandiff records how a plan drifts: the diff of one revision of
// a plan's items against the one before (added, removed, reworded,
// reordered, moved back, and dropped: removed before it was finished), and
// the bounded log of revisions a plan keeps in the thread's state. The
// harness-owned plan and plain plan.md planning share it. It imports only
// the foundation (todo), never a capability or the runtime.
package plandiff
