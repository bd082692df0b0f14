package dawntest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/eval"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
)

// Eval runs the eval cases of the app in dir (or in dir/app, when dir
// has no dawn.yaml but dir/app does: the layout dawn new writes, with the
// main package above the app folder) (the evals/*.yaml files
// beside its routes, as `dawn eval` runs them) as subtests of t, one per
// case, named by route (without its leading slash) and case. A case whose expectation fails fails its
// subtest with the case's file and line, the expectation and why.
//
// Every route runs on model; a nil model runs each route on its own model
// (agent.md, dawn.yaml, DAWN_MODEL, else the offline model), built by
// opts.Models when set. Judge criteria are scored by eval.judge_model in
// dawn.yaml, built the same way, or by model when dawn.yaml names none.
// A broken eval file fails t.
func Eval(t *testing.T, dir string, model llms.Model, opts Options) {
	t.Helper()
	dir = appFolder(dir)
	factory := opts.Models
	if factory == nil {
		factory = func(spec string) (llms.Model, error) {
			if model != nil {
				return model, nil
			}
			return models.New(models.ScriptInDir(spec, dir), os.Getenv)
		}
	}
	h := apptest.New(t, dir, model, apptest.Options{Tools: opts.Tools, StorePath: opts.StorePath, Models: factory, Markers: opts.Markers})
	cases, err := eval.Collect(dir, h.App.Tree)
	if err != nil {
		t.Fatalf("dawntest.Eval: %v", err)
	}
	if len(cases) == 0 {
		t.Fatalf("dawntest.Eval: no eval cases in %s: add a YAML file of cases in an evals/ folder beside a route's agent.md", dir)
	}
	judge := model
	if spec := h.App.Config.Eval.JudgeModel; spec != "" {
		if judge, err = factory(spec); err != nil {
			t.Fatalf("dawntest.Eval: eval.judge_model %s: %v", spec, err)
		}
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.Route, "/")+"/"+c.Name, func(t *testing.T) {
			report := eval.Run(context.Background(), h.Runs, []eval.Case{c}, eval.Options{Judge: judge})
			for _, a := range report.Cases[0].Attempts {
				for _, r := range a.Results {
					if !r.Pass {
						t.Errorf("%s:%d: case %q: %s: %s", c.File, c.Line, c.Name, r.Expectation, r.Detail)
					}
				}
			}
		})
	}
}

// appFolder is dir, or dir/app when dir is a project dawn new wrote: no
// dawn.yaml of its own, and an app folder with one.
func appFolder(dir string) string {
	if fileExists(filepath.Join(dir, "dawn.yaml")) || !fileExists(filepath.Join(dir, "app", "dawn.yaml")) {
		return dir
	}
	return filepath.Join(dir, "app")
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}
