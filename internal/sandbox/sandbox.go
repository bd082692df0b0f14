// Package sandbox is the contract between the runBash capability and the
// providers that isolate a thread's commands (bwrap, docker): acquire a
// box for a key, run a command in it with a deadline and bounded output,
// copy files in and out, release it, destroy it, and check before use
// that the host can run them at all. It also holds what every provider
// shares: the settings, the bounded output buffer and the idle pool.
//
// It imports no Dawn package; the providers import it, never the reverse.
package sandbox

import (
	"context"
	"errors"
	"time"
)

// Workdir is where a box's workspace sits inside it.
const Workdir = "/workspace"

// TimeoutExit is the exit code of a command stopped by its deadline, as
// coreutils' timeout reports it.
const TimeoutExit = 124

// Provider makes boxes. Its methods are safe for concurrent use; the pool
// never asks it for two boxes of one key at once.
type Provider interface {
	// Preflight says why this host cannot run the provider's boxes, or
	// nil: the binary or daemon it needs, and that it works.
	Preflight(ctx context.Context) error
	// Acquire starts a box for key, with an empty workspace.
	Acquire(ctx context.Context, key string) (Box, error)
}

// Box is one running sandbox. Its methods are called by one goroutine at
// a time.
type Box interface {
	// Exec runs command with sh -c in the workspace and returns what it
	// printed, at most Output.Max bytes of each stream. When ctx ends
	// first the whole process tree is killed and the result has
	// TimeoutExit. An error is the box failing, not the command.
	Exec(ctx context.Context, command string, out Output) (Result, error)
	// Write puts files into the workspace and removes the paths in
	// remove, both relative to Workdir.
	Write(ctx context.Context, files []File, remove []string) error
	// Read returns the workspace's regular files, within lim.
	Read(ctx context.Context, lim Limits) (Snapshot, error)
	// Close stops the box and frees everything it holds on the host.
	Close(ctx context.Context) error
}

// Output bounds what Exec keeps of each stream.
type Output struct{ Max int }

// Result is a finished command.
type Result struct {
	ExitCode  int
	Stdout    []byte
	Stderr    []byte
	Truncated bool
	Duration  time.Duration
	// TimedOut says the deadline stopped the command.
	TimedOut bool
}

// File is a workspace file: its path relative to Workdir, with / separators.
type File struct {
	Path string
	Data []byte
}

// Limits bound Read: a file over MaxFile bytes, files past MaxFiles or
// past MaxTotal bytes together are listed in Snapshot.Skipped, not read.
type Limits struct {
	MaxFile  int64
	MaxFiles int
	MaxTotal int64
}

// Snapshot is the workspace as Read found it.
type Snapshot struct {
	Files []File
	// Skipped are the files Read left out, with their sizes.
	Skipped []Skipped
}

// Skipped is a file over the limits.
type Skipped struct {
	Path string
	Size int64
}

// ErrNotStarted wraps a box's failure before the command started (its
// container gone, say): running the command on a new box is safe.
var ErrNotStarted = errors.New("the command did not start")

// ErrUnavailable wraps a Preflight failure.
var ErrUnavailable = errors.New("sandbox unavailable")
