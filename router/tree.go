package router

import (
	"fmt"
	"strings"
)

// Tree is an app's routes, found by Discover. It does not change after
// Discover returns, so any number of goroutines may use it at once.
type Tree struct {
	// Dir is the app folder's absolute path.
	Dir string
	// Routes holds every valid route, agents and subagents, sorted by ID.
	Routes []*Route

	byID map[string]*Route
	root *node
	// maxParams is the most params any agent route has.
	maxParams int
	// broken holds the routes whose agent.md Discover could not read
	// (reported among its problems), for MatchBroken.
	broken *Tree
}

// node is one step of the matching trie: a route id's segments, one per
// level, with the agent route that ends here.
type node struct {
	static   map[string]*node
	dynamic  *node
	catchAll *node
	optional *node
	route    *Route
}

// Route returns the route whose ID is id, or nil.
func (t *Tree) Route(id string) *Route {
	if t == nil {
		return nil
	}
	return t.byID[id]
}

// Match finds the route for a request path and its params.
//
// The path may be a route id ("/support/[tenant]"), which matches that route
// with no params, subagents included. Otherwise it is a concrete path
// ("/support/acme") matched against agent routes only; the most specific
// route wins, comparing part by part: static beats [x] beats [...x] beats
// [[...x]]. A "#..." suffix (Dawn's "#agent") and a trailing "/" are ignored.
//
// Each part of a concrete path is percent-decoded once, and params hold
// the decoded values ("/support/ac%20me" gives tenant "ac me"). A route id
// is looked up as written, without decoding.
//
// A path no route matches is a *NotFoundError (errors.Is ErrNotFound). A
// path with a part that is, after decoding, empty, "." or "..", or holds
// "/", a backslash, NUL or another control character or invalid UTF-8, a
// bad percent escape, a param longer than MaxParamBytes or a path longer
// than 8 KiB wraps ErrInvalidPath.
func (t *Tree) Match(path string) (*Route, map[string]string, error) {
	clean, decoded, brackets, err := cleanPath(path)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		return nil, nil, &NotFoundError{Path: path}
	}
	if r := t.byID[clean]; r != nil {
		return r, map[string]string{}, nil
	}
	if brackets || t.root == nil {
		// Brackets only ever name a route id, and that lookup failed.
		return nil, nil, &NotFoundError{Path: path}
	}
	var buf [8]string
	values := buf[:]
	if t.maxParams > len(buf) {
		values = make([]string, t.maxParams)
	}
	r := t.root.match(decoded[1:], values, 0)
	if r == nil {
		return nil, nil, &NotFoundError{Path: path}
	}
	params := make(map[string]string, len(r.Params))
	for i, name := range r.Params {
		if len(values[i]) > MaxParamBytes {
			return nil, nil, invalidPath(path, fmt.Sprintf("param %q of route %s is longer than %d bytes after decoding", name, r.ID, MaxParamBytes))
		}
		params[name] = values[i]
	}
	return r, params, nil
}

// MatchBroken reports the id of the route a path names, as Match finds
// routes, among those Discover found but could not read (their agent.md
// has a problem it reported). A server that serves the routes that work
// answers such a path as a broken route rather than a missing one.
func (t *Tree) MatchBroken(path string) (id string, ok bool) {
	if t == nil || t.broken == nil {
		return "", false
	}
	r, _, err := t.broken.Match(path)
	if err != nil {
		return "", false
	}
	return r.ID, true
}

// match finds the most specific route for rest, the path after this node
// with no leading "/" ("" at the end). values[k:] receives the param values.
func (n *node) match(rest string, values []string, k int) *Route {
	if rest == "" {
		if n.route != nil {
			return n.route
		}
		if n.optional != nil {
			values[k] = ""
			return n.optional.route
		}
		return nil
	}
	part, next, _ := strings.Cut(rest, "/")
	if child := n.static[part]; child != nil {
		if r := child.match(next, values, k); r != nil {
			return r
		}
	}
	if n.dynamic != nil {
		values[k] = part
		if r := n.dynamic.match(next, values, k+1); r != nil {
			return r
		}
	}
	if n.catchAll != nil && n.catchAll.route != nil {
		values[k] = rest
		return n.catchAll.route
	}
	if n.optional != nil {
		values[k] = rest
		return n.optional.route
	}
	return nil
}

// insert adds an agent route; the caller has made sure no other route has
// the same pattern.
func (n *node) insert(r *Route) {
	for _, seg := range r.Segments {
		n = n.child(seg)
	}
	n.route = r
}

func (n *node) child(seg Segment) *node {
	var slot **node
	switch seg.Kind {
	case Dynamic:
		slot = &n.dynamic
	case CatchAll:
		slot = &n.catchAll
	case OptionalCatchAll:
		slot = &n.optional
	default:
		if n.static == nil {
			n.static = make(map[string]*node)
		}
		c := n.static[seg.Value]
		if c == nil {
			c = &node{}
			n.static[seg.Value] = c
		}
		return c
	}
	if *slot == nil {
		*slot = &node{}
	}
	return *slot
}
