package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newTypegenCmd(cfg *Config) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "typegen",
		Short: "Write generated Go, TypeScript and JSON Schemas for the app",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("typegen is not built yet")
		},
	}
	appFlag(cmd, &dir)
	return cmd
}
