// Package planview shows a run's live plan on a terminal: the plan block with
// ○ pending, ▶ in progress and ✓ completed items, redrawn in place on a TTY,
// or one plain line per plan_update for logs and pipes.
//
// It reads stream events and writes to an io.Writer (TerminalWidth is its one
// system call).
package planview
