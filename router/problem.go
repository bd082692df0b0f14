package router

import (
	"errors"
	"fmt"
)

// Problem is one thing wrong with an app folder: a bad folder name, a bad
// agent.md, two routes with one id. Discover returns every Problem it finds,
// joined with errors.Join.
type Problem struct {
	// Path is the folder or file at fault, starting with the app folder as
	// the user gave it.
	Path string
	// Line is the line in Path at fault, or 0 when the problem has no line.
	Line int
	// Route is the id of the route at fault, when one is known.
	Route string
	// Msg says what is wrong and what to do.
	Msg string
}

// Error returns "path: msg", or "path:line: msg" when Line is set.
func (p *Problem) Error() string {
	switch {
	case p.Path == "":
		return p.Msg
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	default:
		return p.Path + ": " + p.Msg
	}
}

// ErrNotFound is matched by errors.Is for every *NotFoundError.
var ErrNotFound = errors.New("route not found")

// ErrInvalidPath is wrapped by Match's error for a request path it refuses:
// one whose parts, percent-decoded, are empty, "." or "..", or hold "/",
// backslashes, NUL or other control characters; see Tree.Match.
var ErrInvalidPath = errors.New("invalid route path")

// NotFoundError says that no route matches a request path.
type NotFoundError struct {
	// Path is the request path as given to Match.
	Path string
}

// Error names the path and says how to list the routes.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no route matches %q: run \"dawn routes\" to list the app's routes", e.Path)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
