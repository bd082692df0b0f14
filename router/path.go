package router

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxParamBytes caps a param's value after percent-decoding: a longer value
// makes the path invalid.
const MaxParamBytes = 1024

// maxPathBytes caps a request path as given, before decoding.
const maxPathBytes = 8 << 10

// cleanPath turns a request path into the form route ids use: the "#..."
// route-kind suffix dropped, a leading "/" and no trailing "/". decoded is
// the same path with each part percent-decoded once (p itself when nothing
// was escaped). Every part, after decoding, must be a valid path part: not
// empty, "." or "..", with no "/", backslash, NUL or other control
// character, and valid UTF-8. brackets reports whether the path as given
// holds "[" or "]", which only route ids do.
func cleanPath(raw string) (p, decoded string, brackets bool, err error) {
	if len(raw) > maxPathBytes {
		return "", "", false, invalidPath(raw, fmt.Sprintf("it is longer than %d bytes", maxPathBytes))
	}
	p = raw
	escaped := false
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '#':
			p = p[:i]
		case '[', ']':
			brackets = true
		case '%':
			escaped = true
		}
	}
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	if p == "/" {
		return p, p, brackets, nil
	}
	var b []byte
	if escaped {
		b = make([]byte, 0, len(p))
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		part := p[start:i]
		start = i + 1
		if escaped && strings.IndexByte(part, '%') >= 0 {
			dec, err := url.PathUnescape(part)
			if err != nil {
				return "", "", false, invalidPath(raw, fmt.Sprintf("part %q has a bad percent escape (%v): write %%25 for a literal %%", part, err))
			}
			if strings.IndexByte(dec, '/') >= 0 {
				return "", "", false, invalidPath(raw, fmt.Sprintf(`part %q decodes to %q, which holds a "/": a param is one path part, and a catch-all takes parts separated by a plain "/"`, part, dec))
			}
			if why := checkPart(dec); why != "" {
				return "", "", false, invalidPath(raw, fmt.Sprintf("part %q decodes to %q: %s", part, dec, why))
			}
			part = dec
		} else if why := checkPart(part); why != "" {
			return "", "", false, invalidPath(raw, why)
		}
		if escaped {
			b = append(b, '/')
			b = append(b, part...)
		}
	}
	decoded = p
	if escaped {
		decoded = string(b)
	}
	return p, decoded, brackets, nil
}

// checkPart says what makes part, one decoded part of a path, invalid, or
// returns "" when it is valid.
func checkPart(part string) string {
	switch part {
	case "":
		return `it has an empty part ("//")`
	case ".", "..":
		return fmt.Sprintf("%q parts are not allowed", part)
	}
	for i := 0; i < len(part); {
		c := part[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0:
				return "it holds a NUL byte"
			case c == '\\':
				return `it holds a backslash: separate parts with "/"`
			case c < 0x20 || c == 0x7f:
				return fmt.Sprintf("it holds the control character %U", rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(part[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "it is not valid UTF-8"
		case unicode.IsControl(r):
			return fmt.Sprintf("it holds the control character %U", r)
		}
		i += size
	}
	return ""
}

// invalidPath is an ErrInvalidPath error quoting raw, shortened if long.
func invalidPath(raw, why string) error {
	return fmt.Errorf("%w %s: %s", ErrInvalidPath, quoteShort(raw), why)
}

// quoteShort quotes s, cut to its first 100 bytes when longer.
func quoteShort(s string) string {
	const keep = 100
	if len(s) <= keep {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:keep], len(s))
}

// Path builds a concrete request path from the route's pattern and params:
// "/support/[tenant]" with tenant=acme is "/support/acme". Values are
// percent-escaped with url.PathEscape, so Match decodes them back; a
// catch-all value may hold "/" between its parts, and an optional catch-all
// may be empty or missing. A missing param, or a value Match would refuse
// (see Match), is an error. Params the route does not use are ignored.
func (r *Route) Path(params map[string]string) (string, error) {
	var b strings.Builder
	for _, seg := range r.Segments {
		if seg.Kind == Static {
			b.WriteByte('/')
			b.WriteString(seg.Value)
			continue
		}
		value, ok := params[seg.Value]
		if !ok && seg.Kind != OptionalCatchAll {
			return "", fmt.Errorf("route %s: missing param %q", r.ID, seg.Value)
		}
		if value == "" && seg.Kind == OptionalCatchAll {
			continue
		}
		if err := checkParamValue(seg, value); err != nil {
			return "", fmt.Errorf("route %s: param %q: %w", r.ID, seg.Value, err)
		}
		for part := range strings.SplitSeq(value, "/") {
			b.WriteByte('/')
			b.WriteString(url.PathEscape(part))
		}
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

// checkParamValue reports whether value can fill seg in a concrete path.
func checkParamValue(seg Segment, value string) error {
	if value == "" {
		return fmt.Errorf("the value is empty")
	}
	if len(value) > MaxParamBytes {
		return fmt.Errorf("value %s is longer than %d bytes", quoteShort(value), MaxParamBytes)
	}
	if seg.Kind == Dynamic && strings.Contains(value, "/") {
		return fmt.Errorf("value %q may not contain \"/\": use a catch-all [...%s] for several parts", value, seg.Value)
	}
	for part := range strings.SplitSeq(value, "/") {
		if why := checkPart(part); why != "" {
			return fmt.Errorf("value %q: %s", value, why)
		}
	}
	return nil
}
