package router

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// agentFile is the file that makes a folder a route.
const agentFile = "agent.md"

// Discover finds every route under appDir: each folder holding agent.md.
//
// Folders whose names start with "_" or ".", node_modules, and the evals/
// folder beside a route's agent.md are skipped.
// Symlinked folders inside the app are followed; ones that lead outside it,
// or back into their own parents, are reported and skipped.
//
// Discover collects every problem it finds (bad folder names, bad agent.md
// files, two routes with one id) as *Problem values joined with errors.Join,
// and still returns a Tree of the routes that are fine. An appDir that is
// missing or not a folder is an error with no Tree.
//
// agent.md front matter may hold only the router's own keys; see
// DiscoverWith for the keys capabilities claim.
func Discover(appDir string) (*Tree, error) {
	return DiscoverWith(appDir, Claims{})
}

// DiscoverWith is Discover that also accepts, in every agent.md, the front
// matter keys claims names (see ParseAgentWith).
func DiscoverWith(appDir string, claims Claims) (*Tree, error) {
	abs, err := filepath.Abs(appDir)
	if err != nil {
		return nil, fmt.Errorf("app folder %s: %w", appDir, err)
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("app folder %s does not exist: create it, or pass --app DIR to point at your app folder", appDir)
	case err != nil:
		return nil, fmt.Errorf("app folder %s cannot be read: %w; pass --app DIR to point at another folder", appDir, unwrapPathError(err))
	case !info.IsDir():
		return nil, fmt.Errorf("app folder %s is a file, not a folder: pass --app DIR with the folder that holds your routes", appDir)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("app folder %s: %w", appDir, unwrapPathError(err))
	}
	d := &discovery{appDir: appDir, abs: abs, real: real, claims: claims, reported: map[string]bool{}}
	d.walk(real, "", nil)
	tree := d.tree(d.routes())
	tree.broken = newTree(d.abs, d.broken)
	return tree, d.err()
}

// discovery holds the state of one Discover call.
type discovery struct {
	appDir string // as the user gave it, for messages
	abs    string // absolute, for Route.Dir
	real   string // absolute with symlinks resolved, for the walk
	claims Claims // front matter keys capabilities read

	routeDirs []string        // folders holding agent.md, relative, slash-separated
	reported  map[string]bool // bad folders already reported
	problems  []*Problem
	broken    []*Route // routes whose agent.md could not be read
}

// display returns rel joined to the app folder as the user gave it.
func (d *discovery) display(rel string) string {
	return filepath.Join(d.appDir, filepath.FromSlash(rel))
}

func (d *discovery) problem(rel, route, msg string) {
	d.problems = append(d.problems, &Problem{Path: d.display(rel), Route: route, Msg: msg})
}

// walk walks the real folder root, which sits at rel in the app.
// linkParents are the real folders holding the symlinks followed to get here.
func (d *discovery) walk(root, rel string, linkParents []string) {
	_ = filepath.WalkDir(root, func(p string, entry fs.DirEntry, err error) error {
		r := joinRel(rel, filepath.ToSlash(strings.TrimLeft(p[len(root):], string(filepath.Separator))))
		if err != nil {
			d.problem(r, "", fmt.Sprintf("cannot read: %v: check its permissions", unwrapPathError(err)))
			return nil
		}
		name := entry.Name()
		switch {
		case entry.IsDir():
			if p != root && (skipFolder(name) || isEvalsFolder(p)) {
				return fs.SkipDir
			}
		case entry.Type()&fs.ModeSymlink != 0:
			d.followLink(p, r, linkParents)
		case name == agentFile && entry.Type().IsRegular():
			d.routeDirs = append(d.routeDirs, parentRel(r))
		}
		return nil
	})
}

// followLink handles a symlink at the real path p, which sits at rel.
func (d *discovery) followLink(p, rel string, linkParents []string) {
	name := filepath.Base(p)
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		if name == agentFile {
			d.problem(rel, "", "agent.md is a link to a file that does not exist: fix or remove the link")
		}
		return
	}
	info, err := os.Stat(target)
	if err != nil {
		return
	}
	if !info.IsDir() {
		if name == agentFile && info.Mode().IsRegular() {
			d.routeDirs = append(d.routeDirs, parentRel(rel))
		}
		return
	}
	if skipFolder(name) {
		return
	}
	if !within(d.real, target) {
		d.problem(rel, "", fmt.Sprintf("this folder is a link to %s, outside the app folder, so Dawn does not follow it: move or copy that folder into the app", target))
		return
	}
	parents := append(slices.Clip(linkParents), filepath.Dir(p))
	for _, parent := range parents {
		if within(target, parent) {
			d.problem(rel, "", fmt.Sprintf("this folder is a link to %s, which holds the link itself, so following it would loop: remove the link", target))
			return
		}
	}
	d.walk(target, rel, parents)
}

// err joins the problems found, sorted by path, or returns nil.
func (d *discovery) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(d.problems, func(a, b *Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	errs := make([]error, len(d.problems))
	for i, p := range d.problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// skipFolder reports whether a folder and everything in it is left out.
func skipFolder(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || name == "node_modules"
}

// evalsFolder beside a route's agent.md holds the route's eval cases
// (dawn eval), never routes.
const evalsFolder = "evals"

// isEvalsFolder reports whether the folder p is an evals/ folder beside an
// agent.md.
func isEvalsFolder(p string) bool {
	if filepath.Base(p) != evalsFolder {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(p), agentFile))
	return err == nil
}

// within reports whether child is dir or inside it; both are clean absolute
// paths.
func within(dir, child string) bool {
	if child == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(child, dir)
}

func joinRel(base, rel string) string {
	switch {
	case rel == "":
		return base
	case base == "":
		return rel
	}
	return base + "/" + rel
}

func parentRel(rel string) string {
	dir := path.Dir(rel)
	if dir == "." {
		return ""
	}
	return dir
}

// unwrapPathError drops the path an *fs.PathError repeats, since our
// messages name the path already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
