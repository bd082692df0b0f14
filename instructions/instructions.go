package instructions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// Name is the capability's name in GET /routes, dawn routes --json and
// errors. It stays "memory", the name clients and tools already read.
const Name = "memory"

// The files of the capability.
const (
	// RouteFile sits beside a route's agent.md: that route's standing
	// instructions.
	RouteFile = "memory.md"
	// AppFile sits in the app folder: standing instructions for every
	// route of the app.
	AppFile = "AGENTS.md"
)

// MaxFileSize is the largest memory.md or AGENTS.md read: 64 KiB. Every
// byte is sent on every model call.
const MaxFileSize = 64 << 10

// Marker returns the standing-instructions marker. It applies to a route
// with a memory.md beside its agent.md, or in an app with an AGENTS.md, and
// contributes one prompt fragment holding both files' text, AGENTS.md
// first. The fragment does not depend on the thread's state, so it is the
// same on every model call. Its Details are {"files":[...]}, the files
// read, relative to the app folder.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// WorkerKeepsPrompts keeps the standing instructions for the workers that
// run a route's steps (plan-first, parallel plans): every agent of the
// route follows them.
func (marker) WorkerKeepsPrompts() bool { return true }

// Detect finds memory.md in a route folder; DetectRoute, which Prepare
// uses, also finds the app's AGENTS.md.
func (marker) Detect(dir string) (string, bool) {
	if isFile(filepath.Join(dir, RouteFile)) {
		return RouteFile, true
	}
	return "", false
}

// DetectRoute reports the route's memory.md, else the app's AGENTS.md.
func (m marker) DetectRoute(route *router.Route) (string, bool) {
	if file, ok := m.Detect(route.Dir); ok {
		return file, true
	}
	if app := filepath.Join(route.AppDir(), AppFile); isFile(app) {
		return app, true
	}
	return "", false
}

// Load reads the app's AGENTS.md and the route's memory.md, whichever are
// there; file is the one DetectRoute found.
func (marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	var sources []Source
	for _, s := range []Source{
		{Scope: "the whole app", File: filepath.Join(route.AppDir(), AppFile)},
		{Scope: "this route", File: filepath.Join(route.Dir, RouteFile)},
	} {
		if !isFile(s.File) {
			continue
		}
		text, err := ReadFile(s.File)
		if err != nil {
			return nil, err
		}
		s.Text = text
		sources = append(sources, s)
	}
	files := make([]string, len(sources))
	for i, s := range sources {
		files[i] = s.File
		if rel, err := filepath.Rel(route.AppDir(), s.File); err == nil && filepath.IsLocal(rel) {
			files[i] = filepath.ToSlash(rel)
		}
	}
	prompt := Render(sources)
	return &capabilities.Contribution{
		Prompts: []capabilities.Prompt{func(thread.State) string { return prompt }},
		Details: map[string]any{"files": files},
	}, nil
}

// Source is one file of standing instructions.
type Source struct {
	// Scope says whom the file speaks for, in the prompt: "the whole app"
	// or "this route".
	Scope string
	// File is the file's path; the prompt shows its base name.
	File string
	// Text is the file's text, trimmed.
	Text string
}

// Render renders the standing-instructions section of the system prompt:
// a heading, then each source's text under a line naming its file and
// scope. Sources with no text are left out; with none, it is "".
func Render(sources []Source) string {
	var b strings.Builder
	for _, s := range sources {
		if s.Text == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Standing instructions\n\nThe app's authors wrote these instructions; follow them on every turn.\n")
		}
		fmt.Fprintf(&b, "\nFrom %s (%s):\n\n%s\n", filepath.Base(s.File), s.Scope, s.Text)
	}
	return b.String()
}

// ReadFile reads a memory.md or AGENTS.md: UTF-8 text (a byte order mark
// and CRLF line endings are accepted) of at most MaxFileSize bytes. It
// returns the text trimmed; errors name the file and what to do.
func ReadFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("%s cannot be read: %v; make it readable or remove it", path, err)
	}
	if len(data) > MaxFileSize {
		return "", fmt.Errorf("%s is %d KiB, over the %d KiB limit for standing instructions (they are sent on every model call): shorten it", path, (len(data)+1023)>>10, MaxFileSize>>10)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s is not UTF-8 text: save it as UTF-8", path)
	}
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n")), nil
}

// isFile reports whether path is a regular file (following symlinks).
func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
