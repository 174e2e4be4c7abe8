package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
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
  --top N           rows per table (default ` + fmt.Sprint(profiles.DefaultTop) + `)
  --source-dir DIR  the service's source checkout: source lines and the compiler's
                    reasons (why a value escapes to the heap) in the findings;
                    default: the current module when it holds the service's main package
  --no-source       findings from the profiles alone, without building the source
  --explain RULE    the long explanation of a finding's rule, with its thresholds and fix

Findings come first: each names a known problem (string concatenation in a
loop, fmt on a hot path, a replacer or regexp built per call, small unbuffered
writes, the logger's lock, reflection-heavy JSON, GC pressure, unpreallocated
growth, values escaping through interface arguments, goroutine growth, a
service that was not the bottleneck, a file re-read per request), the lines
that cause it with their numbers and the compiler's reasons, and the usual fix.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if explain != "" {
				text, err := findings.Explain(explain)
				if err != nil {
					return usageError{err}
				}
				_, err = io.WriteString(cmd.OutOrStdout(), text)
				return err
			}
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
			_, err = writeRunReport(cmd.Context(), cmd.OutOrStdout(), rf, run)
			return err
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
