package router

import (
	"fmt"
	"strings"
)

// acceptedForms ends every folder-name error.
const acceptedForms = "accepted forms are name, [param], [...param], [[...param]] and (group)"

// ParseSegment parses one folder name of a route path.
//
//	(group)       group is true: the folder is left out of the route id
//	[x]           Dynamic: one path part, as param x
//	[...x]        CatchAll: one or more path parts, as param x
//	[[...x]]      OptionalCatchAll: zero or more path parts, as param x
//	anything else Static
//
// Param names match ^[A-Za-z_][A-Za-z0-9_]*$. For a group, seg is the zero
// Segment. A malformed name is an error that says what is wrong with it.
func ParseSegment(name string) (seg Segment, group bool, err error) {
	switch {
	case name == "":
		return Segment{}, false, segmentError(name, "it is empty")
	case strings.HasPrefix(name, "("):
		return parseGroup(name)
	case strings.HasPrefix(name, "[["):
		return parseOptionalCatchAll(name)
	case strings.HasPrefix(name, "["):
		return parseBracket(name)
	default:
		return parseStatic(name)
	}
}

func parseGroup(name string) (Segment, bool, error) {
	if !strings.HasSuffix(name, ")") || len(name) < 2 {
		return Segment{}, false, segmentError(name, `a group must end with ")"`)
	}
	inner := name[1 : len(name)-1]
	if inner == "" {
		return Segment{}, false, segmentError(name, "the group has no name")
	}
	if strings.ContainsAny(inner, "()[]") {
		return Segment{}, false, segmentError(name, "a group name may not contain ( ) [ or ]")
	}
	return Segment{}, true, nil
}

func parseOptionalCatchAll(name string) (Segment, bool, error) {
	if !strings.HasSuffix(name, "]]") {
		return Segment{}, false, segmentError(name, `it starts with "[[" but does not end with "]]"`)
	}
	inner := name[2 : len(name)-2]
	param, ok := strings.CutPrefix(inner, "...")
	if !ok {
		return Segment{}, false, segmentError(name, fmt.Sprintf("double brackets are only for optional catch-alls: write [[...%s]], or [%s] for one part", inner, inner))
	}
	if err := checkParamName(name, param); err != nil {
		return Segment{}, false, err
	}
	return Segment{Kind: OptionalCatchAll, Value: param}, false, nil
}

func parseBracket(name string) (Segment, bool, error) {
	if !strings.HasSuffix(name, "]") || len(name) < 2 {
		return Segment{}, false, segmentError(name, `it starts with "[" but does not end with "]"`)
	}
	inner := name[1 : len(name)-1]
	if param, ok := strings.CutPrefix(inner, "..."); ok {
		if err := checkParamName(name, param); err != nil {
			return Segment{}, false, err
		}
		return Segment{Kind: CatchAll, Value: param}, false, nil
	}
	if err := checkParamName(name, inner); err != nil {
		return Segment{}, false, err
	}
	return Segment{Kind: Dynamic, Value: inner}, false, nil
}

func parseStatic(name string) (Segment, bool, error) {
	switch {
	case strings.ContainsAny(name, "[]()"):
		return Segment{}, false, segmentError(name, "a plain name may not contain [ ] ( or ): brackets and parens must wrap the whole folder name")
	case strings.ContainsAny(name, "#\\/\x00"):
		return Segment{}, false, segmentError(name, `a plain name may not contain "#", "/", "\" or NUL`)
	case name == "." || name == "..":
		return Segment{}, false, segmentError(name, `"." and ".." are not folder names`)
	}
	return Segment{Kind: Static, Value: name}, false, nil
}

func checkParamName(name, param string) error {
	if param == "" {
		return segmentError(name, "the param has no name")
	}
	if !isParamName(param) {
		return segmentError(name, fmt.Sprintf("param name %q must start with a letter or _ and hold only letters, digits and _", param))
	}
	return nil
}

// isParamName reports whether s matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isParamName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		digit := '0' <= c && c <= '9'
		if !letter && !(digit && i > 0) {
			return false
		}
	}
	return true
}

func segmentError(name, why string) error {
	return fmt.Errorf("folder name %q: %s; %s", name, why, acceptedForms)
}

// String returns the segment as written in a route id: "support",
// "[tenant]", "[...slug]" or "[[...slug]]".
func (s Segment) String() string {
	switch s.Kind {
	case Dynamic:
		return "[" + s.Value + "]"
	case CatchAll:
		return "[..." + s.Value + "]"
	case OptionalCatchAll:
		return "[[..." + s.Value + "]]"
	default:
		return s.Value
	}
}

// String returns the kind's name: "static", "dynamic", "catch-all" or
// "optional catch-all".
func (k SegmentKind) String() string {
	switch k {
	case Static:
		return "static"
	case Dynamic:
		return "dynamic"
	case CatchAll:
		return "catch-all"
	case OptionalCatchAll:
		return "optional catch-all"
	default:
		return fmt.Sprintf("SegmentKind(%d)", int(k))
	}
}
