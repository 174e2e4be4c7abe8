package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/gitstate"

	"github.com/perfscope/perfscope/internal/bench"
)

// benchRunJSON is the JSON form of a benchmark run's summary.
type benchRunJSON struct {
	Meta     bench.Meta     `json:"meta"`
	Path     string         `json:"path"`
	Args     []string       `json:"args"`
	Results  int            `json:"results"`
	Packages []benchPkgJSON `json:"packages"`
	Warnings []string       `json:"warnings,omitempty"`
	Notes    []string       `json:"notes,omitempty"`
	// Interrupted: the run was stopped early; the results are those
	// measured until then.
	Interrupted bool `json:"interrupted"`
}

type benchPkgJSON struct {
	bench.PackageRun
	Error string `json:"error,omitempty"`
}

// WriteBenchRun summarises a benchmark run in format f: how many results
// of how many benchmarks went to which file, measured on what, and the
// profiles saved beside it. The JSON form has the fields meta, path,
// args, results, packages (import_path, cpu_profile, mem_profile, error),
// warnings, notes (such as a benchmark that could not be counted under
// valgrind and kept its time only) and interrupted.
func WriteBenchRun(w io.Writer, f Format, run *bench.RunRecord) error {
	if f == JSON {
		out := benchRunJSON{Meta: run.Meta, Path: run.Path, Args: run.Args, Results: len(run.Results.Results), Interrupted: run.Interrupted}
		for _, p := range run.Packages {
			jp := benchPkgJSON{PackageRun: p}
			if p.Err != nil {
				jp.Error = p.Err.Error()
			}
			out.Packages = append(out.Packages, jp)
		}
		for _, e := range run.Results.Warnings {
			out.Warnings = append(out.Warnings, e.Error())
		}
		out.Notes = benchRunNotes(run)
		return writeJSON(w, out)
	}
	commit := "-"
	if c := run.Meta.Commit; c != "" {
		commit = gitstate.Short(c)
		if run.Meta.Dirty {
			commit += " (dirty)"
		}
	}
	pkgs := "packages"
	if len(run.Packages) == 1 {
		pkgs = "package"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d results of %d benchmarks in %d %s -> %s\n", len(run.Results.Results), run.Results.Benchmarks(), len(run.Packages), pkgs, run.Path)
	fmt.Fprintf(&b, "commit %s  %s  %s\n", commit, run.Meta.GoVersion, run.Meta.CPU)
	if run.Interrupted {
		b.WriteString("interrupted: the results are those measured until then\n")
	}
	for _, p := range run.Packages {
		var prof []string
		for _, f := range []string{p.CPUProfile, p.MemProfile} {
			if f != "" {
				prof = append(prof, f)
			}
		}
		if len(prof) > 0 {
			fmt.Fprintf(&b, "profiles of %s: %s\n", p.ImportPath, strings.Join(prof, ", "))
		}
	}
	for _, n := range benchRunNotes(run) {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write benchmark summary: %w", err)
	}
	return nil
}

// benchRunNotes are a run's notes, what limited its instruction counts
// last, as counting follows the ordinary run.
func benchRunNotes(run *bench.RunRecord) []string {
	return append(slices.Clip(run.Notes), countNoteTexts(run.CountNotes)...)
}

// countNoteTexts writes what limited or prevented instruction counts,
// one line each: "pkg BenchmarkX: no instruction count, measured by time
// only: why".
func countNoteTexts(notes []bench.CountNote) []string {
	var out []string
	for _, n := range notes {
		name := n.Benchmark
		if n.BaseOnly {
			name += " (in the base)"
		}
		switch {
		case n.Err != nil:
			out = append(out, name+": no instruction count, measured by time only: "+n.Err.Error())
		case n.Capped != nil:
			out = append(out, name+": "+allocationCapText(n.Capped))
		}
	}
	return out
}

// allocationCapText says how the allocation cap limited a count.
func allocationCapText(c *bench.AllocationCap) string {
	perOp := strconv.FormatFloat(c.BytesPerOp, 'f', 0, 64) + " B"
	if c.Over {
		return fmt.Sprintf("%s of allocation per operation: even the fewest operations a count runs (%d in its shorter run, %d in its longer) allocate more than %d MiB with the collector off",
			perOp, c.Shorter, c.Longer, c.Limit>>20)
	}
	return fmt.Sprintf("%s of allocation per operation: counted over %d operations instead of %d to stay under %d MiB with the collector off; the count is less precise",
		perOp, c.Counted, c.Wanted, c.Limit>>20)
}
