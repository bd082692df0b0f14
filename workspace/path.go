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

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
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
