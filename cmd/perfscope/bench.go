package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	var (
		opts   bench.Options
		format string
		rec    recordFlags
		quiet  bool
	)
	formats := []string{"text", "json"}
	c := &cobra.Command{
		Use:   "bench [packages]",
		Short: "Run Go benchmarks and save the results with commit and machine metadata",
		Long: `bench runs "go test -run '^$' -bench REGEX -benchmem -count N" on the packages
(default ".") one package at a time, shows which benchmark and round is running
when stderr is a terminal (benchmark k of n, the time elapsed and an estimate
of the time left; -q turns it off), and writes the results in standard Go benchmark
format, so benchstat reads them, to -o (default .perfscope/bench/<time>-<commit>.txt).

The file starts with configuration lines naming what was measured:
  commit: <hash>   branch: <name>   dirty: true|false   go: <version>   cpu: <model>
('perfscope compare' ignores commit, branch and dirty when pairing; for
benchstat add -ignore commit,branch,dirty when comparing two commits.)

With --cpuprofile or --memprofile each package's profile is saved beside the
results as <results>.<package>.cpu.pb.gz / .mem.pb.gz; 'perfscope compare'
finds them and shows where the profiles changed.

Malformed benchmark lines are reported as file:line and skipped. A package
whose benchmarks fail does not stop the others; the exit status is then 1.`,
		Example: `  perfscope bench ./...
  perfscope bench -b 'Parse$' --count 20 --cpuprofile ./internal/parse
  perfscope bench --benchtime 100x --cpu 1,4 -o before.txt ./...`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if opts.Count < 1 {
				return usagef("--count must be at least 1")
			}
			opts.Packages = args
			opts.Log = os.Stderr
			if !quiet && stderrIsTerminal() {
				opts.Status = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
				opts.Progress = terminalProgress(os.Stderr)
			}
			run, err := bench.Run(cmd.Context(), opts)
			if opts.Progress != nil {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			if run == nil {
				return err
			}
			for _, w := range run.Results.Warnings {
				fmt.Fprintln(os.Stderr, "skipped malformed line:", w)
			}
			if len(run.Results.Results) > 0 {
				rec.withStore(cmd.Context(), os.Stderr, func(ctx context.Context, st store.Store) error {
					_, err := st.SaveBenchRun(ctx, store.BenchRunOf(run))
					return err
				})
			}
			if perr := report.WriteBenchRun(cmd.OutOrStdout(), report.Format(format), run); perr != nil {
				return perr
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Bench, "bench", "b", ".", "regular expression of benchmarks to run (go test -bench)")
	f.IntVar(&opts.Count, "count", 10, "samples per benchmark (go test -count)")
	f.StringVar(&opts.Benchtime, "benchtime", "", "time or iterations per sample (go test -benchtime, e.g. 1s, 100x)")
	f.StringVar(&opts.CPU, "cpu", "", "comma-separated GOMAXPROCS values (go test -cpu, e.g. 1,2,4)")
	f.StringVarP(&opts.Output, "output", "o", "", "results file (default .perfscope/bench/<time>-<commit>.txt)")
	f.BoolVar(&opts.CPUProfile, "cpuprofile", false, "save a CPU profile per package beside the results")
	f.BoolVar(&opts.MemProfile, "memprofile", false, "save a memory profile per package beside the results")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress line")
	addFormatFlag(c, &format, formats...)
	rec.register(f, "the results")
	return c
}
