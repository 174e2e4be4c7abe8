package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	var (
		opts   bench.Options
		format string
		rec    recordFlags
	)
	formats := []string{"text", "json"}
	c := &cobra.Command{
		Use:   "bench [packages]",
		Short: "Run Go benchmarks and save the results with commit and machine metadata",
		Long: `bench runs "go test -run '^$' -bench REGEX -benchmem -count N" on the packages
(default ".") one package at a time, shows which benchmark and round is running
when stderr is a terminal, and writes the results in standard Go benchmark
format, so benchstat reads them, to -o (default .perfscope/bench/<time>-<commit>.txt).

The file starts with configuration lines naming what was measured:
  commit: <hash>   branch: <name>   dirty: true|false   go: <version>   cpu: <model>
('perfscope compare' ignores commit, branch and dirty when pairing; for
benchstat add -ignore commit,branch,dirty when comparing two commits.)

With --cpuprofile or --memprofile each package's profile is saved beside the
results as <results>.<package>.cpu.pb.gz / .mem.pb.gz; 'perfscope compare'
finds them and shows where the profiles changed.

Malformed benchmark lines are reported as file:line and skipped. A package
whose benchmarks fail does not stop the others; the exit status is then 1.

Flags:
  -b, --bench REGEX     benchmarks to run (go test -bench; default ".")
  --count N             samples per benchmark (go test -count; default 10)
  --benchtime T         time or iterations per sample (go test -benchtime, e.g. 1s, 100x)
  --cpu LIST            GOMAXPROCS values (go test -cpu, e.g. 1,2,4)
  -o, --output FILE     results file
  --cpuprofile          save a CPU profile per package
  --memprofile          save a memory (allocation) profile per package
  --format F            summary after the run: text (default) or json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if opts.Count < 1 {
				return usagef("--count must be at least 1")
			}
			opts.Packages = args
			opts.Log = os.Stderr
			if stderrIsTerminal() {
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
				rec.withStore(cmd.Context(), os.Stderr, func(st store.Store) error {
					_, err := st.SaveBenchRun(cmd.Context(), store.BenchRunOf(run))
					return err
				})
			}
			if perr := printBenchSummary(cmd.OutOrStdout(), run, format); perr != nil {
				return perr
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Bench, "bench", "b", ".", "regular expression of benchmarks to run")
	f.IntVar(&opts.Count, "count", 10, "samples per benchmark")
	f.StringVar(&opts.Benchtime, "benchtime", "", "time or iterations per sample (e.g. 1s, 100x)")
	f.StringVar(&opts.CPU, "cpu", "", "comma-separated GOMAXPROCS values")
	f.StringVarP(&opts.Output, "output", "o", "", "results file (default .perfscope/bench/<time>-<commit>.txt)")
	f.BoolVar(&opts.CPUProfile, "cpuprofile", false, "save a CPU profile per package beside the results")
	f.BoolVar(&opts.MemProfile, "memprofile", false, "save a memory profile per package beside the results")
	addFormatFlag(c, &format, formats...)
	rec.register(f, "the results")
	return c
}

// terminalProgress shows one status line, rewritten in place.
func terminalProgress(w io.Writer) func(bench.Progress) {
	return func(p bench.Progress) {
		state := "running"
		if p.Done {
			state = "done   "
		}
		side := ""
		if p.Side != "" {
			side = p.Side + " "
		}
		fmt.Fprintf(w, "\r\033[K[%d/%d] %s  %s%s  %s round %d/%d", p.PackageIndex, p.Packages, p.Package, side, state, p.Benchmark, p.Round, p.Rounds)
	}
}

func printBenchSummary(w io.Writer, run *bench.RunRecord, format string) error {
	if format == "json" {
		type pkg struct {
			bench.PackageRun
			Error string `json:"error,omitempty"`
		}
		out := struct {
			Meta     bench.Meta `json:"meta"`
			Path     string     `json:"path"`
			Args     []string   `json:"args"`
			Results  int        `json:"results"`
			Packages []pkg      `json:"packages"`
			Warnings []string   `json:"warnings,omitempty"`
		}{Meta: run.Meta, Path: run.Path, Args: run.Args, Results: len(run.Results.Results)}
		for _, p := range run.Packages {
			jp := pkg{PackageRun: p}
			if p.Err != nil {
				jp.Error = p.Err.Error()
			}
			out.Packages = append(out.Packages, jp)
		}
		for _, e := range run.Results.Warnings {
			out.Warnings = append(out.Warnings, e.Error())
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	names := map[string]bool{}
	for _, r := range run.Results.Results {
		names[r.Name.String()] = true
	}
	commit := run.Meta.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if run.Meta.Dirty {
		commit += " (dirty)"
	}
	pkgs := "packages"
	if len(run.Packages) == 1 {
		pkgs = "package"
	}
	fmt.Fprintf(w, "%d results of %d benchmarks in %d %s -> %s\n", len(run.Results.Results), len(names), len(run.Packages), pkgs, run.Path)
	fmt.Fprintf(w, "commit %s  %s  %s\n", orDash(commit), run.Meta.GoVersion, run.Meta.CPU)
	for _, p := range run.Packages {
		var prof []string
		for _, f := range []string{p.CPUProfile, p.MemProfile} {
			if f != "" {
				prof = append(prof, f)
			}
		}
		if len(prof) > 0 {
			fmt.Fprintf(w, "profiles of %s: %s\n", p.ImportPath, strings.Join(prof, ", "))
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
