package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// LeftpadPath is the request the demo sends to the leftpad example: the
// seed article's own request.
const LeftpadPath = "/v1/leftpad/?str=test&len=50&chr=*"

// Modes returns the example's implementations, profiled in this order.
func Modes() []string { return []string{"naive", "optimized"} }

// Options configure Run. Zero values mean the defaults.
type Options struct {
	// Command starts an example: the example's name and flags are appended
	// to it. Default: this executable's "example" command, so the demo
	// needs no source tree (see Command).
	Command     []string
	Duration    time.Duration // load per mode; default 10s
	Concurrency int           // connections; default 8
	Version     string        // recorded in each run
	Args        []string      // the command line, recorded in each run
	// Progress returns the load progress callback for one mode (nil for none)
	// and a func called when that mode's load is over.
	Progress func(mode string) (func(loadgen.Progress), func())
	Logf     func(format string, args ...any)
	// Analysis configures the analysis of each run, as for any saved run.
	Analysis analysis.Options
	// Source is the examples' source for the analysis. An empty Dir means
	// the examples' embedded source, unpacked into a temporary module for
	// the compiler (see UnpackSource).
	Source analysis.Source
}

// A Result holds the demo's runs, one per mode profiled, in Modes order,
// and what perfscope makes of them.
type Result struct {
	Runs []*run.Run
	// Analyses are the runs' analyses with their findings, in Runs order.
	Analyses []*analysis.Result
	// Comparison sets the modes side by side; nil unless every mode was
	// profiled.
	Comparison *analysis.SideBySide
}

// Run starts the leftpad example for each mode on free loopback ports (as
// o.Command), profiles it under load with capture.Profile and stops it, and
// analyses each run with analysis.Analyze. The runs are saved under
// run.DefaultRoot like any profiling run. The result holds what was
// measured even when Run fails part way.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if len(o.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the perfscope executable to run the example: %w", err)
		}
		o.Command = Command(exe)
	}
	tmp, err := os.MkdirTemp("", "perfscope-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if o.Source.Dir == "" && !o.Analysis.NoCompiler {
		src := filepath.Join(tmp, "src")
		if err := UnpackSource(src); err != nil {
			return nil, err
		}
		o.Source.Dir = src
	}
	res := &Result{}
	for _, mode := range Modes() {
		saved, err := profileMode(ctx, o, mode, tmp)
		if saved != nil {
			res.Runs = append(res.Runs, saved)
			in := analysis.FromRun(saved)
			in.Source = o.Source
			res.Analyses = append(res.Analyses, analysis.Analyze(ctx, in, o.Analysis))
		}
		if err != nil {
			return res, fmt.Errorf("leftpad --mode %s: %w", mode, err)
		}
		if saved.Interrupted {
			break
		}
	}
	if modes := Modes(); len(res.Analyses) == len(modes) {
		res.Comparison = analysis.Beside(modes[0], res.Analyses[0].Analysis, modes[1], res.Analyses[1].Analysis)
	}
	return res, nil
}

func profileMode(ctx context.Context, o Options, mode, tmp string) (*run.Run, error) {
	args := append(slices.Clone(o.Command[1:]), "leftpad",
		"--mode", mode,
		"--addr", "127.0.0.1:0",
		"--pprof-addr", "127.0.0.1:0",
		"--log", filepath.Join(tmp, "access-"+mode+".log"))
	svc, err := Start(ctx, o.Command[0], args...)
	if err != nil {
		return nil, err
	}
	defer svc.Stop()
	o.Logf("leftpad --mode %s serving on %s; profiling it under load for %s", mode, svc.URL, o.Duration)
	cfg := loadConfig(svc.URL, o.Duration)
	cfg.Concurrency = o.Concurrency
	finish := func() {}
	if o.Progress != nil {
		cfg.Progress, finish = o.Progress(mode)
	}
	saved, err := capture.Profile(ctx, capture.Options{
		Load:     cfg,
		PprofURL: svc.PprofURL,
		Args:     o.Args,
		Version:  o.Version,
	})
	finish()
	return saved, err
}

// loadConfig is the demo's load against the leftpad service at base.
func loadConfig(base string, d time.Duration) loadgen.Config {
	return loadgen.Config{URL: base + LeftpadPath, Concurrency: 8, Duration: d}
}
