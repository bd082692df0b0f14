package cli

import (
	"fmt"
	"github.com/dawn-go/dawn/capabilities"
	"go/token"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/internal/typegen"
	"github.com/spf13/cobra"
)

func newTypegenCmd(cfg *Config) *cobra.Command {
	var dir, out string
	cmd := &cobra.Command{
		Use:   "typegen",
		Short: "Write generated Go, TypeScript and JSON Schemas for the app",
		Long: `typegen writes, for every route of the app, its id, params, tool inputs
(writeTodos included where plan.md exists) and state as:
  dawngen.go            a Go package with those types and a typed client
  dawn.generated.d.ts   the same types for TypeScript front ends
  schemas/*.json        JSON Schemas of each route's tools and state
into --out (default <app>/dawngen). The output is deterministic: running it
again on an unchanged app rewrites nothing. It exits 1 if the app has
problems; run dawn check to see them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			a, err := loadApp(capabilities.WithSavedToolLists(cmd.Context()), cfg, dir)
			if err != nil {
				for _, p := range splitJoined(err) {
					fmt.Fprintln(stderr, "error:", p)
				}
				return appProblem(fmt.Errorf("%s has problems, so typegen wrote nothing; fix them (dawn check lists them) and run typegen again", dir))
			}
			for _, w := range a.Warnings {
				fmt.Fprintln(stderr, "warning:", w)
			}
			if !cfg.ToolsKnown && hasGoMain(dir) {
				fmt.Fprintf(stderr, "warning: %s has a Go main package whose tools this dawn binary does not know, so their input types are missing; run the app's own binary instead: go run %s typegen --app %s\n",
					dir, goRunTarget(dir), dir)
			}
			if out == "" {
				out = filepath.Join(dir, typegen.DefaultPackage)
			}
			files, err := typegen.Generate(a, typegen.Options{Package: packageFor(out)})
			if err != nil {
				return err
			}
			changes, err := typegen.Sync(out, files)
			for _, rel := range changes.Written {
				fmt.Fprintln(stdout, "wrote", filepath.Join(out, filepath.FromSlash(rel)))
			}
			for _, rel := range changes.Removed {
				fmt.Fprintln(stdout, "removed", filepath.Join(out, filepath.FromSlash(rel)))
			}
			if err != nil {
				return err
			}
			if len(changes.Unchanged) > 0 {
				fmt.Fprintf(stdout, "%d file(s) unchanged in %s\n", len(changes.Unchanged), out)
			}
			return nil
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().StringVar(&out, "out", "", "the folder to write into (default <app>/dawngen)")
	return cmd
}

// packageFor is the Go package name for an output folder: its name when
// that is a valid package name, else typegen's default.
func packageFor(out string) string {
	name := strings.ToLower(filepath.Base(filepath.Clean(out)))
	if !token.IsIdentifier(name) || name == "main" || name == "_" {
		return typegen.DefaultPackage
	}
	return name
}

// goRunTarget is dir as `go run` takes a package folder: "./examples/app".
func goRunTarget(dir string) string {
	clean := filepath.ToSlash(filepath.Clean(dir))
	if filepath.IsAbs(dir) || clean == "." || strings.HasPrefix(clean, "../") {
		return clean
	}
	return "./" + clean
}
