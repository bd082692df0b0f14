package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newRunCmd(cfg *Config) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "run ROUTE",
		Short: "Run one route from the terminal and show the live plan",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("run is not built yet")
		},
	}
	appFlag(cmd, &dir)
	return cmd
}
