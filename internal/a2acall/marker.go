package a2acall

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
)

// Name is the capability's name.
const Name = "a2a_subagents"

// Marker returns the capability: a route folder whose subagents/ folder
// holds an a2a.yaml in a subfolder gets that subfolder as a remote
// subagent.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// Detect switches the capability on for a route folder with a remote
// subagent; the file it reports is the subagents/ folder.
func (marker) Detect(dir string) (string, bool) {
	return "subagents", len(folders(dir)) > 0
}

// Load reads every remote subagent's a2a.yaml. A folder that holds an
// agent.md too, or whose name is not plain, stops the route.
func (marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	files := folders(route.Dir)
	subs := map[string]capabilities.RemoteSubagent{}
	var details []map[string]string
	var warnings []string
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := files[name]
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "agent.md")); err == nil {
			errs = append(errs, fmt.Errorf("%s and an agent.md are in one subagent folder; a subagent is either a route (agent.md) or a remote agent (%s): remove one", path, FileName))
			continue
		}
		if strings.ContainsAny(name, "[]()") || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			errs = append(errs, fmt.Errorf("%s: a remote subagent's folder needs a plain name, not a param, a group or a private folder: rename %q", path, name))
			continue
		}
		cfg, err := Parse(path, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cfg.CredentialEnv != "" && os.Getenv(cfg.CredentialEnv) == "" {
			warnings = append(warnings, fmt.Sprintf("%s: credential_env names %s, which is not set; calls to %q will fail until it is", path, cfg.CredentialEnv, name))
		}
		subs[name] = &remote{cfg: cfg, http: &http.Client{}}
		details = append(details, map[string]string{"subagent": name, "card": cfg.Card, "file": path})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &capabilities.Contribution{RemoteSubagents: subs, Details: details, Warnings: warnings}, nil
}
