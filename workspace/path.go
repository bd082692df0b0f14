package workspace

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"
)

// Limits on paths.
const (
	// MaxPathLen bounds a path, in bytes.
	MaxPathLen = 1024
	// MaxNameLen bounds one segment of a path, in bytes.
	MaxNameLen = 255
)

// Clean returns the workspace path p names: slash-separated, relative to
// the workspace root, with "." segments, repeated slashes and a trailing
// slash removed and "a/../b" folded to "b". The root is ".". Both backends
// take a path only through Clean, so they agree on what it names.
//
// Clean refuses, with an error the model can act on, a path that is empty,
// absolute ("/etc", `C:\`), climbs out of the root (".."), holds a
// backslash, a NUL or another control character, is not UTF-8, or is
// longer than MaxPathLen (a segment longer than MaxNameLen).
func Clean(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("path is empty; name a file relative to the workspace root, e.g. notes.md")
	case len(p) > MaxPathLen:
		return "", fmt.Errorf("path is %d bytes long, over the %d-byte limit; use a shorter path", len(p), MaxPathLen)
	case !utf8.ValidString(p):
		return "", fmt.Errorf("path %q is not UTF-8 text", p)
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("path %q holds a control character; use a plain name", p)
	case strings.Contains(p, `\`):
		return "", fmt.Errorf("path %q holds a backslash; separate folders with /", p)
	case strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':'):
		return "", fmt.Errorf("path %q is absolute; paths are relative to the workspace root, e.g. %q", p, strings.TrimLeft(p, "/"))
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leads out of the workspace; paths stay inside the workspace root", p)
	}
	if c != "." && !fs.ValidPath(c) {
		return "", fmt.Errorf("path %q is not a valid workspace path", p)
	}
	for seg := range strings.SplitSeq(c, "/") {
		if len(seg) > MaxNameLen {
			return "", fmt.Errorf("path %q has a name of %d bytes, over the %d-byte limit", p, len(seg), MaxNameLen)
		}
	}
	return c, nil
}

// CleanFile is Clean for a path that must name a file, not the root.
func CleanFile(p string) (string, error) {
	c, err := Clean(p)
	if err == nil && c == "." {
		return "", fmt.Errorf("path %q names the workspace root, not a file; name a file such as notes.md", p)
	}
	return c, err
}

// Match reports whether the workspace path name matches glob pattern.
// Segments match as path.Match does ("*", "?", "[a-z]"), and a "**"
// segment matches any number of folders, none included. A pattern without
// a slash matches the last name of the path at any depth: "*.go" matches
// "main.go" and "cmd/app/main.go". A malformed pattern matches nothing.
func Match(pattern, name string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(name))
		return ok
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// matchSegments matches name segments against pattern segments in one
// pass over the name, keeping the set of pattern positions reached so far
// (a "**" position stays reached while it takes segments). The work is at
// most len(pat)*len(segs) segment matches, however many "**" there are;
// trying every split of the name for every "**" was exponential in them.
func matchSegments(pat, segs []string) bool {
	cur, next := make([]bool, len(pat)+1), make([]bool, len(pat)+1)
	cur[0] = true
	skipStars(pat, cur)
	for _, seg := range segs {
		clear(next)
		moved := false
		for i, p := range pat {
			if !cur[i] {
				continue
			}
			if p == "**" {
				next[i], moved = true, true
			} else if ok, _ := path.Match(p, seg); ok {
				next[i+1], moved = true, true
			}
		}
		if !moved {
			return false
		}
		skipStars(pat, next)
		cur, next = next, cur
	}
	return cur[len(pat)]
}

// skipStars marks, in reached, the position after every reached "**":
// a "**" may take no segment at all.
func skipStars(pat []string, reached []bool) {
	for i, p := range pat {
		if reached[i] && p == "**" {
			reached[i+1] = true
		}
	}
}

// validPattern says what is wrong with glob pattern, or "".
func validPattern(pattern string) string {
	if strings.TrimSpace(pattern) == "" {
		return "a pattern is empty"
	}
	for seg := range strings.SplitSeq(pattern, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Sprintf("pattern %q is malformed (%v)", pattern, err)
		}
	}
	return ""
}
