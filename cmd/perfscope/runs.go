package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newRunsCmd) }

func newRunsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "runs",
		Short: "Manage the profiling runs a perfscope server keeps",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newRunsRmCmd())
	return c
}

func newRunsRmCmd() *cobra.Command {
	var sf serverFlags
	c := &cobra.Command{
		Use:   "rm ID...",
		Short: "Delete profiling runs from a perfscope server",
		Long: `rm deletes each named run from a server started with 'perfscope serve': the
run leaves its index and pages, and its files leave the server's data
directory. It needs a token, as uploads do. An unknown id is an error; the
runs named before it are deleted.`,
		Example: `  perfscope runs rm --server http://perf:7070 20261124-070053-4f1a2c   # token in $PERFSCOPE_TOKEN`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := sf.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), sf.timeout)
			defer cancel()
			for _, id := range args {
				res, err := cl.DeleteRun(ctx, id)
				if err != nil {
					return err
				}
				if err := report.WriteRunDeleted(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			}
			return nil
		},
	}
	sf.add(c.Flags(), time.Minute)
	return c
}
