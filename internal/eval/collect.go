package eval

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/router"
)

// ScriptExt marks a scripted model's turns in an evals/ folder
// (refund.script.yaml): not an eval file.
const ScriptExt = ".script"

// Collect reads the eval files of every route in tree: the *.yaml and
// *.yml files in the evals/ folder beside each route's agent.md, except
// scripts (*.script.yaml), in route and file order. Files are named in cases and errors as appDir (the app
// folder as the user gave it) joined with their path in the app. Every
// problem is reported, joined, as *Error values; the cases that are fine
// are returned beside them.
func Collect(appDir string, tree *router.Tree) ([]Case, error) {
	var cases []Case
	var errs []error
	for _, r := range tree.Routes {
		dir := filepath.Join(r.Dir, Folder)
		files, err := evalFiles(dir)
		if err != nil {
			errs = append(errs, &Error{File: filepath.Join(appDir, filepath.FromSlash(r.RelDir), Folder), Msg: fmt.Sprintf("cannot be read: %v", err)})
			continue
		}
		for _, f := range files {
			shown := filepath.Join(appDir, filepath.FromSlash(r.RelDir), Folder, filepath.Base(f))
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, &Error{File: shown, Msg: fmt.Sprintf("cannot be read: %v", err)})
				continue
			}
			got, err := Parse(shown, r.ID, data)
			cases = append(cases, got...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return cases, errors.Join(errs...)
}

// evalFiles lists the YAML files in dir, sorted; a missing dir has none.
func evalFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if ext := filepath.Ext(name); (ext == ".yaml" || ext == ".yml") && filepath.Ext(stem) != ScriptExt {
			out = append(out, filepath.Join(dir, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Select keeps the cases of route: a route id ("/support/[tenant]") or a
// concrete path the route matches ("/support/acme"). An empty route keeps
// them all.
func Select(tree *router.Tree, cases []Case, route string) ([]Case, error) {
	if route == "" {
		return cases, nil
	}
	r, _, err := tree.Match(route)
	if err != nil {
		// The router's error already says to run `dawn routes`.
		return nil, fmt.Errorf("--route %s: %w", route, err)
	}
	var out []Case
	for _, c := range cases {
		if c.Route == r.ID {
			out = append(out, c)
		}
	}
	return out, nil
}

// Path is the concrete path the case runs: its route id with the input's
// params in place of the dynamic segments.
func (c Case) Path(tree *router.Tree) (string, error) {
	r := tree.Route(c.Route)
	if r == nil {
		return "", fmt.Errorf("%s: case %q: route %s not found", c.File, c.Name, c.Route)
	}
	parts := []string{}
	for _, seg := range r.Segments {
		if seg.Kind == router.Static {
			parts = append(parts, seg.Value)
			continue
		}
		v, ok := c.Input.Params[seg.Value]
		if !ok && seg.Kind != router.OptionalCatchAll {
			return "", fmt.Errorf("%s: case %q: input.params.%s is missing: route %s needs it, e.g. params: {%s: VALUE}", c.File, c.Name, seg.Value, r.ID, seg.Value)
		}
		for _, part := range strings.Split(v, "/") {
			if part != "" {
				parts = append(parts, url.PathEscape(part))
			}
		}
	}
	return "/" + strings.Join(parts, "/"), nil
}
