package planning

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/router"
)

// Name is the capability's name.
const Name = "planning"

// Marker returns the planning capability marker. It applies to a route
// folder holding a plan.md (a regular file, even an empty one) and
// contributes the writeTodos tool, the todos state field (replace reducer,
// default the seed), the plan_revisions field that keeps every change of
// the todos (RevisionsField), the planning prompt fragment and the
// plan_update and plan_revised transformer. Its Details are {"seed":[...]}.
func Marker() capabilities.Marker { return marker{lim: defaultLimits()} }

// MarkerWith is Marker for an app that registers Go verifiers by name
// (dawn.Verifier), which a harness-owned plan.md names in "- verify: NAME"
// lines.
func MarkerWith(verifiers map[string]harness.VerifierFunc) capabilities.Marker {
	return marker{lim: defaultLimits(), verifiers: verifiers}
}

// marker is the planning marker; lim are the writeTodos limits of the app
// (see Configure), verifiers the app's Go verifiers.
type marker struct {
	lim       limits
	verifiers map[string]harness.VerifierFunc
}

func (marker) Name() string { return Name }

func (marker) Detect(dir string) (string, bool) {
	info, err := os.Stat(filepath.Join(dir, MarkerFile))
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	return MarkerFile, true
}

func (m marker) Load(_ context.Context, _ *router.Route, file string) (*capabilities.Contribution, error) {
	lim := m.lim
	f, err := LoadFile(file)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("cannot read the plan seed: %w; make %s readable or remove it", err, file)
		}
		return nil, err
	}
	seed, warning := f.Seed, f.Warning
	if len(seed) > lim.todos {
		warning = fmt.Sprintf("%s seeds %d items, more than the %d a writeTodos call may pass (limits.todos in dawn.yaml), so the model cannot write the whole list back; shorten the plan or raise the limit", file, len(seed), lim.todos)
	}
	if f.Settings.Enforce {
		if err := checkLines(file, f, m.verifiers); err != nil {
			return nil, err
		}
		return enforcedContribution(file, f, lim, m.verifiers), nil
	}
	c := &capabilities.Contribution{
		Tools: []capabilities.Tool{newTool(lim, true)},
		Fields: []capabilities.Field{{
			Name:    StateField,
			Type:    "array",
			Schema:  mustJSON(listSchema()),
			Default: mustJSON(seed),
			Reducer: capabilities.Replace,
			Source:  file,
		}, {
			Name:    RevisionsField,
			Type:    "object",
			Schema:  mustJSON(revisionsSchema()),
			Default: mustJSON(emptyLog()),
			Reducer: capabilities.Replace,
			Source:  file,
		}},
		Prompts:      []capabilities.Prompt{intro},
		StatePrompts: []capabilities.Prompt{statePrompt(seed)},
		Transformers: []capabilities.Transformer{Transform},
		Hooks:        &capabilities.Hooks{Edited: edited},
		Details:      map[string]any{"seed": seed},
	}
	if warning != "" {
		c.Warnings = []string{warning}
	}
	return c, nil
}
