package main

import (
	"context"
	"errors"
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
		opts    bench.Options
		format  string
		rec     recordFlags
		quiet   bool
		measure string
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

With --measure instructions each benchmark also gets instructions/op, counted
under valgrind (see "--measure instructions" in the README) and written with a
"Unit instructions/op assume=exact" line; a benchmark that cannot be counted
keeps its time and is named in a note.

Malformed benchmark lines are reported as file:line and skipped. A package
whose tests do not build or whose benchmarks fail does not stop the others;
the exit status is then 1.

Until the run ends the results are written to <results>.partial, then renamed:
a .partial file is what a perfscope that was killed outright had measured.
Ctrl-C stops the benchmark running, keeps the results measured until then in
the results file and the store, ends the file with the line "interrupted: true"
(which applies to no result, so benchstat and 'perfscope compare' read the
file as any other) and exits with status 130. Each test binary is built with
"go test -c" and run by perfscope itself; on Linux it is killed when perfscope
dies, kill -9 included.`,
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
			m, err := bench.ParseMeasure(measure, false)
			if err != nil {
				return usagef("%v", err)
			}
			var iopts bench.InstructionOptions
			if m == bench.MeasureInstructions {
				if iopts.Valgrind, err = bench.FindValgrind(); err != nil {
					return exitError{2, "cannot count instructions: " + err.Error()}
				}
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
			if m == bench.MeasureInstructions && cmd.Context().Err() == nil {
				var progress func(done, total int, name string)
				if !quiet {
					progress = countProgress(os.Stderr)
				}
				if cerr := bench.CountRun(cmd.Context(), run, opts.Dir, 1, iopts, progress); cerr != nil {
					err = errors.Join(err, cerr)
				}
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
			if run.Interrupted {
				return exitError{code: 130, msg: "interrupted: the results measured until then are in " + run.Path + ", marked interrupted"}
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
	f.StringVar(&measure, "measure", "time", "time, or instructions: also count instructions/op of each benchmark under valgrind")
	addFormatFlag(c, &format, formats...)
	rec.register(f, "the results")
	return c
}
