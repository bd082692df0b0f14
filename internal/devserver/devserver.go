package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadyPrefix starts the line dev prints once it serves.
const ReadyPrefix = "Dawn dev ready at "

// ChildEnv marks a dev server started by another dev server (the stock
// binary running an app's own binary): it prints ChildReadyPrefix instead
// of ReadyPrefix, never builds the app itself, and shuts down when its
// standard input closes (UntilStdinCloses), so it cannot outlive its
// parent.
const ChildEnv = "DAWN_DEV_CHILD"

// ChildReadyPrefix starts the ready line of a dev child.
const ChildReadyPrefix = "Dawn dev child ready at "

// ErrNoGo is RunGo's error when the go command is not on PATH.
var ErrNoGo = errors.New("the go command is not on PATH")

// UntilStdinCloses returns a context that ends when standard input reaches
// its end: a dev child's parent holds the other end, so the child shuts
// down gracefully however the parent goes away.
func UntilStdinCloses(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx
}

// PrintProblems prints a headline and every problem in err (the leaves of
// an errors.Join tree), one a line.
func PrintProblems(w io.Writer, headline string, err error) {
	var b []byte
	b = fmt.Appendf(b, "dawn dev: %s:\n", headline)
	for _, p := range leaves(err) {
		b = fmt.Appendf(b, "  error: %v\n", p)
	}
	_, _ = w.Write(b)
}

// leaves flattens errors.Join trees into their leaves.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}
