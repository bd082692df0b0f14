package router

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// subagentsFolder holds a route's subagents, one folder each.
const subagentsFolder = "subagents"

// routes turns the folders holding agent.md into routes, reporting the ones
// that are broken.
func (d *discovery) routes() []*Route {
	slices.Sort(d.routeDirs)
	d.routeDirs = slices.Compact(d.routeDirs)
	isRoute := make(map[string]bool, len(d.routeDirs))
	for _, rel := range d.routeDirs {
		isRoute[rel] = true
	}
	routes := make([]*Route, 0, len(d.routeDirs))
	for _, rel := range d.routeDirs {
		if r := d.route(rel, isRoute); r != nil {
			routes = append(routes, r)
		}
	}
	return d.readAgents(routes)
}

// readAgents reads every route's agent.md, a few files at a time, and
// returns the routes whose agent.md is fine.
func (d *discovery) readAgents(routes []*Route) []*Route {
	problems := make([]*Problem, len(routes))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8, len(routes)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(routes); i = int(next.Add(1)) - 1 {
				problems[i] = d.readAgent(routes[i])
			}
		})
	}
	wg.Wait()
	kept := routes[:0]
	for i, r := range routes {
		if problems[i] != nil {
			d.problems = append(d.problems, problems[i])
			d.broken = append(d.broken, r)
			continue
		}
		kept = append(kept, r)
	}
	return kept
}

// route builds the route for the folder rel, or reports why it cannot.
func (d *discovery) route(rel string, isRoute map[string]bool) *Route {
	var parts []string
	if rel != "" {
		parts = strings.Split(rel, "/")
	}
	segs := make([]Segment, 0, len(parts))
	for i, part := range parts {
		seg, group, err := ParseSegment(part)
		if err != nil {
			folder := strings.Join(parts[:i+1], "/")
			if !d.reported[folder] {
				d.reported[folder] = true
				d.problem(folder, "", err.Error())
			}
			return nil
		}
		if !group {
			segs = append(segs, seg)
		}
	}
	r := &Route{
		ID:       idOf(segs),
		Dir:      filepath.Join(d.abs, filepath.FromSlash(rel)),
		RelDir:   rel,
		Kind:     KindAgent,
		Segments: segs,
	}
	if n := len(parts); n >= 2 && parts[n-2] == subagentsFolder && isRoute[strings.Join(parts[:n-2], "/")] {
		last := segs[len(segs)-1]
		if last.Kind != Static || last.Value != parts[n-1] {
			d.problem(rel, r.ID, "a subagent folder needs a plain name, not a param or a group: rename it")
			return nil
		}
		r.Kind = KindSubagent
		r.Parent = idOf(segs[:len(segs)-2])
	}
	if msg := checkParams(r); msg != "" {
		d.problem(rel, r.ID, msg)
		return nil
	}
	return r
}

// checkParams fills r.Params and says what is wrong with them, if anything.
func checkParams(r *Route) string {
	for i, seg := range r.Segments {
		if seg.Kind == Static {
			continue
		}
		if slices.Contains(r.Params, seg.Value) {
			return fmt.Sprintf("route %s uses the param %q twice: rename one of its folders", r.ID, seg.Value)
		}
		r.Params = append(r.Params, seg.Value)
		last := i == len(r.Segments)-1
		if !last && r.Kind == KindAgent && (seg.Kind == CatchAll || seg.Kind == OptionalCatchAll) {
			return fmt.Sprintf("route %s: the %s %s must be the last part of the route id: move agent.md into the %s folder, or make it [%s]", r.ID, seg.Kind, seg, seg, seg.Value)
		}
	}
	return ""
}

// readAgent reads and parses the route's agent.md into r.Agent, or says
// what is wrong with it. It only reads d, so calls may run at once.
func (d *discovery) readAgent(r *Route) *Problem {
	rel := joinRel(r.RelDir, agentFile)
	file := filepath.Join(r.Dir, agentFile)
	data, err := readAtMost(file, MaxAgentFileSize)
	if err != nil {
		return &Problem{Path: d.display(rel), Route: r.ID, Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err))}
	}
	agent, err := ParseAgentWith(d.display(rel), data, d.claims)
	if err != nil {
		p := &Problem{Path: d.display(rel), Msg: err.Error()}
		errors.As(err, &p)
		p.Route = r.ID
		return p
	}
	agent.File = file
	r.Agent = agent
	return nil
}

// readAtMost reads up to limit+1 bytes of file, enough for ParseAgent to
// see that it is too big.
func readAtMost(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// idOf joins segments into a route id: "/support/[tenant]", or "/".
func idOf(segs []Segment) string {
	if len(segs) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(s.String())
	}
	return b.String()
}

// patternOf is a route id with param names dropped: two agent routes with
// the same pattern match the same paths, and neither is more specific.
func patternOf(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s.Kind == Static {
			b.WriteString(s.Value)
		} else {
			b.WriteString(Segment{Kind: s.Kind}.String())
		}
	}
	return b.String()
}

// tree drops routes that clash with each other, reporting every clash, and
// indexes the rest.
func (d *discovery) tree(routes []*Route) *Tree {
	routes = d.dropClashes(routes, func(r *Route) string { return r.ID }, func(r *Route, others []*Route) string {
		return fmt.Sprintf("route id %s is also the id of %s: (group) folders are left out of ids, so rename or move one of them", r.ID, d.folders(others, false))
	})
	routes = d.dropClashes(routes, func(r *Route) string {
		if r.Kind != KindAgent {
			return "" // subagents match by id only
		}
		return patternOf(r.Segments)
	}, func(r *Route, others []*Route) string {
		return fmt.Sprintf("route %s matches the same paths as %s, so neither can win: give the param folders one name, or merge the routes", r.ID, d.folders(others, true))
	})
	return newTree(d.abs, routes)
}

// dropClashes reports and drops every route whose key another route shares.
// An empty key never clashes.
func (d *discovery) dropClashes(routes []*Route, key func(*Route) string, message func(r *Route, others []*Route) string) []*Route {
	byKey := make(map[string][]*Route, len(routes))
	for _, r := range routes {
		if k := key(r); k != "" {
			byKey[k] = append(byKey[k], r)
		}
	}
	kept := routes[:0:0]
	for _, r := range routes {
		k := key(r)
		same := byKey[k]
		if k == "" || len(same) < 2 {
			kept = append(kept, r)
			continue
		}
		others := slices.DeleteFunc(slices.Clone(same), func(o *Route) bool { return o == r })
		d.problem(r.RelDir, r.ID, message(r, others))
	}
	return kept
}

// folders names the routes' folders for a message, with their ids if withID.
func (d *discovery) folders(routes []*Route, withID bool) string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = "folder " + d.display(r.RelDir)
		if withID {
			names[i] = fmt.Sprintf("route %s (folder %s)", r.ID, d.display(r.RelDir))
		}
	}
	return strings.Join(names, " and ")
}

// newTree sorts routes by id, links subagents to their parents and builds
// the matching trie. The routes must have unique ids and patterns.
func newTree(dir string, routes []*Route) *Tree {
	slices.SortFunc(routes, func(a, b *Route) int { return strings.Compare(a.ID, b.ID) })
	t := &Tree{Dir: dir, Routes: routes, byID: make(map[string]*Route, len(routes)), root: &node{}}
	for _, r := range routes {
		t.byID[r.ID] = r
	}
	for _, r := range routes {
		if r.Kind == KindSubagent {
			if parent := t.byID[r.Parent]; parent != nil {
				if parent.Subagents == nil {
					parent.Subagents = make(map[string]string)
				}
				parent.Subagents[r.Segments[len(r.Segments)-1].Value] = r.ID
			}
			continue
		}
		t.root.insert(r)
		t.maxParams = max(t.maxParams, len(r.Params))
	}
	return t
}
