package cli

import (
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/capabilities"

	"github.com/dawn-go/dawn/internal/eval"
	"github.com/spf13/cobra"
)

func newCheckCmd(cfg *Config) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate every route and print every problem",
		Long: `check loads the app and validates every route: agent.md front matter,
folder names, duplicate ids, capability conflicts, plan.md size, the
eval cases in each route's evals/ folder, and a route whose prompt and tool
definitions alone exceed its context.max_input_tokens. It prints
every problem with its file, then warnings, and exits 1 if there was any
problem.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp(capabilities.WithSavedToolLists(cmd.Context()), cfg, dir)
			out := cmd.OutOrStdout()
			problems := splitJoined(err)
			if a != nil && a.Tree != nil {
				_, evalErr := eval.Collect(dir, a.Tree)
				problems = append(problems, splitJoined(evalErr)...)
			}
			if a != nil {
				for _, w := range slices.Concat(a.Warnings, budgetWarnings(a, cfg.Env)) {
					fmt.Fprintln(out, "warning:", w)
				}
			}
			for _, p := range problems {
				fmt.Fprintln(out, "error:", p)
			}
			if len(problems) > 0 {
				return appProblem(fmt.Errorf("%d problem(s) in %s", len(problems), dir))
			}
			fmt.Fprintf(out, "ok: %d route(s) in %s\n", len(a.Routes), dir)
			return nil
		},
	}
	appFlag(cmd, &dir)
	return cmd
}

// splitJoined flattens errors.Join trees into their leaves.
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitJoined(e)...)
		}
		return out
	}
	return []error{err}
}
