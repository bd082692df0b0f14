package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dawn-go/dawn/capabilities"

	"github.com/spf13/cobra"
)

func newRoutesCmd(cfg *Config) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "routes",
		Short: "List the app's routes and their capabilities",
		Long: `routes lists every route: its id, folder, kind, params, capabilities and tools.
With --json it prints a JSON array (id, dir, kind, params, capabilities, and
for planning the seed todos) for tools to read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp(capabilities.WithSavedToolLists(cmd.Context()), cfg, dir)
			if a == nil || a.Tree == nil {
				return appProblem(err)
			}
			infos := a.Describe(cfg.Env)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(infos); err != nil {
					return err
				}
				return appProblem(err)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ROUTE\tKIND\tCAPABILITIES\tTOOLS\tMODEL\tFOLDER")
			for _, r := range infos {
				caps, tools := orDash(strings.Join(r.Capabilities, ",")), orDash(strings.Join(r.Tools, ","))
				if r.Error != "" {
					caps, tools = "BROKEN", "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, caps, tools, r.Model, r.Dir)
			}
			tw.Flush()
			for _, m := range a.Config.Markers {
				if ts, ok := m.(capabilities.ToolSource); ok {
					for _, line := range ts.Sources() {
						fmt.Fprintln(out, line)
					}
				}
			}
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "some routes are broken; run `dawn check` for details")
			}
			return nil
		},
	}
	appFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for tools")
	return cmd
}

// orDash is s, or "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
