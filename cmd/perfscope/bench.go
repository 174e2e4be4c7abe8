package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

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
		// benchmem is go test's switch, always on here.
		benchmem bool
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

Flags may be spelled as go test spells them, with one dash: -bench Parse,
-count=5, -benchtime 100x, -cpu 1,4, -benchmem (always on here).

--cpuprofile and --memprofile are switches, not file names as in go test:
each package's profile is saved beside the results as
<results>.<package>.cpu.pb.gz / .mem.pb.gz, where 'perfscope compare' finds
them and shows where the profiles changed (-o names the results).

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
  perfscope bench -bench 'Parse$' -count 20 -benchtime 100x ./internal/parse
  perfscope bench -b 'Parse$' --count 20 --cpuprofile ./internal/parse
  perfscope bench --benchtime 100x --cpu 1,4 -o before.txt ./...`,
		Annotations: map[string]string{
			runsGoTest:          "bench",
			goTestHint + "run":  "bench runs benchmarks only (it passes -run '^$')",
			goTestHint + "json": "use --format json",
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if opts.Count < 1 {
				return usagef("--count must be at least 1")
			}
			if !benchmem {
				return usagef("--benchmem=false: B/op and allocs/op are always measured")
			}
			if opts.CPUProfile || opts.MemProfile {
				if file := profileFileArg(args); file != "" {
					return usagef("%s is not a package: %s", file, profileSwitches)
				}
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
				opts.Building = func(pkgs []string) { fmt.Fprintln(os.Stderr, report.BuildingTests(pkgs)) }
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
				rec.withStore(cmd.Context(), os.Stderr, func(ctx context.Context, st recorder) error {
					saved, err := store.BenchRunOf(run)
					if err == nil {
						_, err = st.SaveBenchRun(ctx, saved)
					}
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
	f.BoolVar(&opts.CPUProfile, "cpuprofile", false, "save a CPU profile per package beside the results (a switch: see above)")
	f.BoolVar(&opts.MemProfile, "memprofile", false, "save a memory profile per package beside the results (a switch: see above)")
	for _, name := range []string{"cpuprofile", "memprofile"} {
		_ = f.SetAnnotation(name, switchHint, []string{profileSwitches})
	}
	f.BoolVar(&benchmem, "benchmem", true, "B/op and allocs/op: always measured (accepted as go test spells it)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress line")
	f.StringVar(&measure, "measure", "time", "time, or instructions: also count instructions/op of each benchmark under valgrind")
	addFormatFlag(c, &format, formats...)
	rec.register(f, "the results")
	return c
}

// profileSwitches says what bench's --cpuprofile and --memprofile do, for
// someone who gave them a file name as go test takes.
const profileSwitches = "--cpuprofile and --memprofile are switches that save each package's profile beside the results, as <results>.<package>.cpu.pb.gz and .mem.pb.gz (-o names the results)"

// profileFileArg returns the first of args that names a profile file rather
// than a package, as "-cpuprofile cpu.out" leaves one: a file that exists
// (other than Go source, which go test takes), or a name ending as profiles
// do.
func profileFileArg(args []string) string {
	for _, a := range args {
		for _, ext := range []string{".out", ".prof", ".pprof", ".pb.gz", ".pb"} {
			if strings.HasSuffix(a, ext) {
				return a
			}
		}
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(a, ".go") {
			return a
		}
	}
	return ""
}
