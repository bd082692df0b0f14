package router

import (
	"fmt"
	"strings"
)

// cleanPath turns a request path into the form route ids use: the "#..."
// route-kind suffix dropped, a leading "/" and no trailing "/". It refuses
// ".", ".." and empty parts, NUL bytes and backslashes. brackets reports
// whether the path holds "[" or "]", which only route ids do.
func cleanPath(raw string) (p string, brackets bool, err error) {
	p = raw
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '#':
			p = p[:i]
		case 0:
			return "", false, invalidPath(raw, "it holds a NUL byte")
		case '\\':
			return "", false, invalidPath(raw, `it holds a backslash: separate parts with "/"`)
		case '[', ']':
			brackets = true
		}
	}
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	if p == "/" {
		return p, brackets, nil
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch part := p[start:i]; part {
		case "":
			return "", false, invalidPath(raw, `it has an empty part ("//")`)
		case ".", "..":
			return "", false, invalidPath(raw, fmt.Sprintf("%q parts are not allowed", part))
		}
		start = i + 1
	}
	return p, brackets, nil
}

func invalidPath(raw, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidPath, raw, why)
}

// Path builds a concrete request path from the route's pattern and params:
// "/support/[tenant]" with tenant=acme is "/support/acme". A catch-all value
// may hold "/"; an optional catch-all may be empty or missing. A missing
// param, or a value that would not match the route again, is an error.
// Params the route does not use are ignored.
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
		b.WriteByte('/')
		b.WriteString(value)
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
	if strings.ContainsAny(value, "[]#\\\x00") {
		return fmt.Errorf("value %q may not contain [ ] # \\ or NUL", value)
	}
	if seg.Kind == Dynamic && strings.Contains(value, "/") {
		return fmt.Errorf("value %q may not contain \"/\": use a catch-all [...%s] for several parts", value, seg.Value)
	}
	for _, part := range strings.Split(value, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("value %q has an empty, \".\" or \"..\" part", value)
		}
	}
	return nil
}
