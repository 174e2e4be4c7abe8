package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	var (
		rf      reportFlags
		explain string
	)
	c := &cobra.Command{
		Use:   "report [RUNDIR]",
		Short: "Re-render a saved profiling run",
		Long: `report reads a run saved by 'perfscope profile' and renders its report again:
throughput and latency, the top CPU functions (flat and cumulative), the share
of CPU taken by the garbage collector and the allocator, the top allocation
sites by objects and by bytes with their source lines, blocking and mutex
waits, goroutines at the start and end of the window, CPU per route, and the
capture's notes. Without RUNDIR it reports the latest run under
` + run.DefaultRoot + `.

By default user code is ranked first and the runtime, the standard library and
dependencies are folded into one row each; allocation and wait sites are
charged to the innermost line of user code (an allocation inside
runtime.concatstrings counts at the line that concatenates). --all shows every
function as 'go tool pprof -top' does, with sites at the innermost frame as
'pprof -lines' does.

Findings come first: each names a known problem (string concatenation in a
loop, fmt on a hot path, a replacer or regexp built per call, small unbuffered
writes, the logger's lock, reflection-heavy JSON, GC pressure, unpreallocated
growth, values escaping through interface arguments, goroutine growth, a
service that was not the bottleneck, a file re-read per request), the lines
that cause it with their numbers and the compiler's reasons (with the
service's source at hand: the current module or --source-dir), and the usual
fix. --explain RULE prints a rule's long explanation, thresholds and fix.

A run none of whose profiles can be read (damaged or missing files) is a
failure: the report shows what run.json holds, and the exit status is 1 with
a line naming the run and why each profile could not be read. A run captured
without profiles (--allow-no-profiles) is reported as it is.`,
		Example: `  perfscope report
  perfscope report --format markdown .perfscope/runs/20260304-050607-a1b2c3
  perfscope report --route 'GET /users/{id}' --top 20 RUNDIR
  perfscope report --source-dir ~/src/service --list 3 RUNDIR
  perfscope report --explain concat-loop`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if explain != "" {
				text, err := report.Explain(explain)
				if err != nil {
					return usageError{err}
				}
				_, err = io.WriteString(cmd.OutOrStdout(), text)
				return err
			}
			if err := rf.check(); err != nil {
				return err
			}
			r, err := latestOr(args)
			if err != nil {
				return err
			}
			res, err := writeRunReport(cmd.Context(), cmd.OutOrStdout(), rf, r)
			if err != nil {
				return err
			}
			// The report still shows what run.json holds; the exit
			// status says there was nothing in it to diagnose.
			return res.NoProfileRead()
		},
	}
	addFormatFlag(c, &rf.format, report.Formats()...)
	rf.register(c.Flags())
	c.Flags().StringVar(&explain, "explain", "", "print the long explanation of a finding's `RULE` (its id, shown after each finding) and exit")
	_ = c.RegisterFlagCompletionFunc("explain", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return findings.RuleIDs(), cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

// latestOr loads the run directory named in args, or the latest run under
// run.DefaultRoot when args is empty.
func latestOr(args []string) (*run.Run, error) {
	if len(args) == 1 {
		return run.Load(args[0])
	}
	return run.Latest(run.DefaultRoot)
}
