package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/dawn-go/dawn/workspace"

	sbx "github.com/dawn-go/dawn/internal/sandbox"
)

// Bounds of one runBash call.
const (
	// MaxCommand bounds the command text.
	MaxCommand = 64 << 10
	// MaxStream bounds what a call keeps of stdout, and of stderr; the
	// rest is dropped and the result says truncated. The context
	// capability stores a kept output over its limit with the thread.
	MaxStream = 256 << 10
	// syncMargin is the time a call has beyond its command's timeout to
	// copy files in and out.
	syncMargin = 30 * time.Second
	// maxNotes bounds the lines a result's stderr gets about files not
	// kept.
	maxNotes = 5
)

// Output is runBash's result.
type Output struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

// Input is runBash's input.
type Input struct {
	Command   string `json:"command"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

type runBash struct{ box *boxes }

func (t *runBash) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{
		Name: RunBash,
		Description: fmt.Sprintf("Run a shell command (sh -c) in this thread's isolated sandbox, in %s, which holds the same files readFile and writeFile see. "+
			"The result gives exit_code, stdout, stderr, truncated and duration_ms. A command runs at most %s (timeout_ms may shorten it); past it, it is killed with exit code 124. %s",
			sbx.Workdir, t.box.s.Timeout, networkText(t.box.s.Network.Allow)),
		Schema:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the shell command"},"timeout_ms":{"type":"integer","minimum":1,"description":"a shorter timeout for this command, in milliseconds"}},"required":["command"],"additionalProperties":false}`),
		Timeout: t.box.s.Timeout + syncMargin,
	}
}

func networkText(allow bool) string {
	if allow {
		return "The sandbox may reach the network."
	}
	return "The sandbox has no network."
}

// Call copies the thread's files into its box, runs the command, and
// copies the files back as the call's update of the workspace's field.
func (t *runBash) Call(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	in, timeout, err := t.input(inv.Input)
	if err != nil {
		return capabilities.Result{}, err
	}
	if inv.ThreadID == "" {
		return capabilities.Result{}, errors.New("runBash runs in a thread's sandbox, and this call belongs to no thread")
	}
	tree, err := decodeTree(inv.State[workspace.Field])
	if err != nil {
		return capabilities.Result{}, err
	}
	var out Output
	var next workspace.Tree
	key := poolKey(inv.ThreadID, inv.RouteID)
	use := func() error {
		return t.box.pool.Use(ctx, key, func(l *sbx.Lease) error {
			var err error
			out, next, err = run(ctx, l, tree, in.Command, timeout)
			return err
		})
	}
	// A warm box that died (its container removed or out of memory)
	// fails before the command starts: the command runs on a new box.
	if err = use(); errors.Is(err, sbx.ErrNotStarted) {
		err = use()
	}
	if err != nil {
		return capabilities.Result{}, fmt.Errorf("the sandbox failed: %w", err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return capabilities.Result{}, err
	}
	res := capabilities.Result{Output: raw}
	if next != nil {
		update, err := json.Marshal(next)
		if err != nil {
			return capabilities.Result{}, err
		}
		res.Update = thread.State{workspace.Field: update}
	}
	return res, nil
}

// input decodes and checks the call's input, and picks its timeout.
func (t *runBash) input(raw json.RawMessage) (Input, time.Duration, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, 0, &capabilities.InputError{Tool: RunBash, Msg: err.Error()}
	}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return in, 0, &capabilities.InputError{Tool: RunBash, Msg: "command is empty; send the shell command to run"}
	case len(in.Command) > MaxCommand:
		return in, 0, &capabilities.InputError{Tool: RunBash, Msg: fmt.Sprintf("command is %d bytes, over the %d KiB limit; write a script with writeFile and run it", len(in.Command), MaxCommand>>10)}
	case strings.ContainsRune(in.Command, 0):
		return in, 0, &capabilities.InputError{Tool: RunBash, Msg: "command holds a NUL byte"}
	case in.TimeoutMS < 0:
		return in, 0, &capabilities.InputError{Tool: RunBash, Msg: "timeout_ms must be positive"}
	}
	timeout := t.box.s.Timeout
	if d := time.Duration(in.TimeoutMS) * time.Millisecond; in.TimeoutMS > 0 && d < timeout {
		timeout = d
	}
	return in, timeout, nil
}

// run syncs tree into the leased box, runs command and reads the files
// back: next is the workspace after the command, or nil if unchanged.
func run(ctx context.Context, l *sbx.Lease, tree workspace.Tree, command string, timeout time.Duration) (Output, workspace.Tree, error) {
	if err := syncIn(ctx, l, tree); err != nil {
		l.Broken = true
		return Output{}, nil, fmt.Errorf("%w: %w", sbx.ErrNotStarted, err)
	}
	execCtx, cancel := context.WithTimeout(ctx, timeout)
	res, err := l.Box.Exec(execCtx, command, sbx.Output{Max: MaxStream})
	cancel()
	if err != nil {
		l.Broken = true
		return Output{}, nil, err
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncMargin)
	snap, err := l.Box.Read(readCtx, sbx.Limits{MaxFile: workspace.MaxFileSize, MaxFiles: workspace.MaxTreeFiles, MaxTotal: workspace.MaxTreeSize})
	cancel()
	if err != nil {
		l.Broken = true
		return Output{}, nil, err
	}
	next, notes := syncOut(l, tree, snap)
	out := Output{
		ExitCode: res.ExitCode, Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(),
		Stdout: strings.ToValidUTF8(string(res.Stdout), "\uFFFD"),
		Stderr: strings.ToValidUTF8(string(res.Stderr), "\uFFFD"),
	}
	if res.TimedOut {
		notes = append([]string{fmt.Sprintf("the command ran past its %s timeout and was killed", timeout)}, notes...)
	}
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes], fmt.Sprintf("and %d more files are not kept", len(notes)-maxNotes))
	}
	for _, n := range notes {
		out.Stderr += "\n[dawn: " + n + "]"
	}
	return out, next, nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// syncIn brings the box's workspace to tree: it writes the files whose
// content differs from what the lease's record says the box holds and
// removes those the tree no longer has. Files the box holds that were
// never kept in the tree (over the limits) are left alone.
func syncIn(ctx context.Context, l *sbx.Lease, tree workspace.Tree) error {
	var files []sbx.File
	var remove []string
	for name, f := range tree {
		if d := digest([]byte(f.Content)); l.Synced[name] != d {
			files = append(files, sbx.File{Path: name, Data: []byte(f.Content)})
		}
	}
	for name := range l.Synced {
		if _, ok := tree[name]; !ok {
			remove = append(remove, name)
		}
	}
	if len(files) == 0 && len(remove) == 0 {
		return nil
	}
	if err := l.Box.Write(ctx, files, remove); err != nil {
		return fmt.Errorf("copying the workspace into the sandbox: %w", err)
	}
	for _, name := range remove {
		delete(l.Synced, name)
	}
	for _, f := range files {
		l.Synced[f.Path] = digest(f.Data)
	}
	return nil
}

// syncOut makes the tree the box's files now are, within the workspace's
// limits, and records them as synced. notes say which files were not
// kept; next is nil when nothing changed.
func syncOut(l *sbx.Lease, tree workspace.Tree, snap sbx.Snapshot) (next workspace.Tree, notes []string) {
	next = workspace.Tree{}
	now := time.Now().UTC()
	clear(l.Synced)
	changed := false
	for _, f := range snap.Files {
		name, err := workspace.CleanFile(f.Path)
		switch {
		case err != nil || name != f.Path:
			notes = append(notes, fmt.Sprintf("%q is not kept in the thread's workspace: its name is not a workspace path", f.Path))
			continue
		case !utf8.Valid(f.Data):
			notes = append(notes, fmt.Sprintf("%s is not kept in the thread's workspace: it is not UTF-8 text", f.Path))
			continue
		}
		old, ok := tree[name]
		if ok && old.Content == string(f.Data) {
			next[name] = old
		} else {
			next[name] = workspace.File{Content: string(f.Data), Modified: now}
			changed = true
		}
		l.Synced[name] = digest(f.Data)
	}
	for _, s := range snap.Skipped {
		notes = append(notes, fmt.Sprintf("%s (%d bytes) is not kept in the thread's workspace: over its limits of %d KiB a file, %d files and %d KiB in all", s.Path, s.Size, workspace.MaxFileSize>>10, workspace.MaxTreeFiles, workspace.MaxTreeSize>>10))
	}
	if !changed && len(next) == len(tree) {
		return nil, notes
	}
	return next, notes
}

// decodeTree reads the workspace's state field; absent or null is empty.
func decodeTree(raw json.RawMessage) (workspace.Tree, error) {
	tree := workspace.Tree{}
	if len(raw) == 0 || string(raw) == "null" {
		return tree, nil
	}
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("the thread's %s state field is not a file tree: %w", workspace.Field, err)
	}
	return tree, nil
}
