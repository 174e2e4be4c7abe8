package report

import (
	"fmt"
	"io"
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
		out.Notes = run.Notes
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
	for _, n := range run.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write benchmark summary: %w", err)
	}
	return nil
}
