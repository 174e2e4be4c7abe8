package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	var rf reportFlags
	c := &cobra.Command{
		Use:   "report [RUNDIR]",
		Short: "Re-render a saved profiling run",
		Long: `report reads a run saved by 'perfscope profile' and renders its report again:
throughput and latency, the top CPU functions (flat and cumulative), the share
of CPU taken by the garbage collector and the allocator, the top allocation
sites by objects and by bytes with their source lines, blocking and mutex
waits, goroutines at the start and end of the window, CPU per route, and the
capture's notes. Without RUNDIR it reports the latest run under
` + capture.DefaultRoot + `.

By default user code is ranked first and the runtime, the standard library and
dependencies are folded into one row each; allocation and wait sites are
charged to the innermost line of user code (an allocation inside
runtime.concatstrings counts at the line that concatenates). --all shows every
function as 'go tool pprof -top' does, with sites at the innermost frame as
'pprof -lines' does.

Flags:
  --format F        text (default), markdown (PR comments), json (stable field names)
  --all             every function and site as pprof shows them, nothing folded
  --route PATTERN   only CPU and goroutine samples whose http.route label is PATTERN
                    or matches it as a regular expression, e.g. --route 'GET /users/{id}'
  --top N           rows per table (default ` + fmt.Sprint(profiles.DefaultTop) + `)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			var run *capture.Run
			var err error
			if len(args) == 1 {
				run, err = capture.LoadRun(args[0])
			} else {
				run, err = capture.Latest(capture.DefaultRoot)
			}
			if err != nil {
				return err
			}
			_, err = writeRunReport(cmd.OutOrStdout(), rf, run)
			return err
		},
	}
	addFormatFlag(c, &rf.format, report.Formats()...)
	rf.register(c.Flags())
	return c
}
