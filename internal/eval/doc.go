// Package eval runs an app's eval cases: the evals/*.yaml files beside its
// routes. It parses the case files, runs each case through the runner as
// `dawn run` does in-process, checks the run's events and final state
// against the case's expectations (a judge model scores the judge criteria)
// and reports pass rates as a table, JSON and JUnit XML.
//
// It reads runs only through the runner and its event stream; it names no
// capability package and is imported only by the CLI and dawntest.
package eval
