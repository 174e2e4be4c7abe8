package demo

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/perfscope/perfscope/examples/leftpad"
	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// leftpadPackage is the import path that names the example's functions in
// its profiles.
const leftpadPackage = ModulePath + "/examples/leftpad"

// TestMain lets the test binary stand in for perfscope: Run starts the
// examples as this executable's "example" command.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "example" && os.Args[2] == "leftpad" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		code := leftpad.Run(ctx, os.Args[3:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestProfileNaiveLeftpad profiles the bundled leftpad example in its naive
// mode under real load. It checks what holds however busy the machine is:
// requests were served, the run holds an allocation profile, and the block
// report leaves out the profiler's own waits. Which functions rank first
// depends on where the sampler caught the service; that is checked on a
// committed run by TestNaiveLeftpadTopAllocators.
func TestProfileNaiveLeftpad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads a real service")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin, err := Build(ctx, root, "leftpad", tmp)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := Start(ctx, bin, "--mode", "naive", "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0",
		"--log", tmp+"/access.log")
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	if svc.PprofURL == "" {
		t.Fatal("leftpad announced no pprof URL")
	}

	cfg := loadConfig(svc.URL, 4*time.Second)
	saved, err := capture.Profile(ctx, capture.Options{Load: cfg, PprofURL: svc.PprofURL, OutDir: tmp + "/run"})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Load == nil || saved.Load.Successes == 0 {
		t.Fatalf("no successful requests: %+v", saved.Load)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
	for _, err := range errs {
		t.Logf("analysis warning: %v", err)
	}
	if a.Profiles[run.KindAllocs] == nil {
		t.Fatalf("run has no allocs profile: %+v", saved.Profiles)
	}
	// The capture's own requests (pprof handlers waiting out a profile's
	// window) may be in the raw block profile; they are never in the report.
	if block := a.Profiles[run.KindBlock]; block != nil {
		kept, _ := profiles.DropProfilerSamples(block)
		var keptDelay int64
		for _, s := range kept.Sample {
			keptDelay += s.Value[1]
		}
		if a.Block == nil || a.Block.TotalAmount != keptDelay {
			t.Errorf("block report totals %v, want the %d ns left without the profiler's own waits", a.Block, keptDelay)
		}
	}
}

// TestNaiveLeftpadTopAllocators checks what the seed article found on a
// run of the naive leftpad example that `perfscope profile` captured once
// (internal/findings/testdata/capture.sh): leftpad and the StatsD send
// function are among the top three allocating functions of user code.
func TestNaiveLeftpadTopAllocators(t *testing.T) {
	saved, err := run.Load(filepath.Join("..", "findings", "testdata", "runs", "leftpad-naive"))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
	for _, err := range errs {
		t.Errorf("analysis: %v", err)
	}
	allocs := a.Profiles[run.KindAllocs]
	if allocs == nil {
		t.Fatalf("run has no allocs profile: %+v", saved.Profiles)
	}
	sites, err := profiles.Sites(allocs, "alloc_objects", "alloc_space", profiles.AttributeUser, a.Classifier)
	if err != nil {
		t.Fatal(err)
	}
	// Sum the objects of each user function over its lines, as
	// 'pprof -top -alloc_objects' would rank them.
	byFunc := map[string]int64{}
	for _, s := range sites.Rows {
		if s.Class == profiles.User {
			byFunc[s.Function] += s.Count
		}
	}
	funcs := make([]string, 0, len(byFunc))
	for f := range byFunc {
		funcs = append(funcs, f)
	}
	sort.Slice(funcs, func(i, j int) bool { return byFunc[funcs[i]] > byFunc[funcs[j]] })
	top := funcs[:min(3, len(funcs))]
	for _, f := range funcs[:min(6, len(funcs))] {
		t.Logf("%-40s %5.1f%% of objects", f, 100*float64(byFunc[f])/float64(sites.TotalCount))
	}
	for _, want := range []string{leftpadPackage + ".leftpad", leftpadPackage + ".(*statsd).send"} {
		if !slices.Contains(top, want) {
			t.Errorf("%s is not among the top three allocating user functions %v", want, top)
		}
	}
}

func TestModuleRootOutsideCheckout(t *testing.T) {
	if _, err := ModuleRoot(os.TempDir()); err == nil {
		t.Fatal("ModuleRoot found a perfscope checkout in the temp dir")
	}
}

// TestRunAnalysesBothModes runs the whole demo briefly and checks that
// each mode's run comes back analysed and that the modes are compared.
func TestRunAnalysesBothModes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads a real service twice")
	}
	t.Chdir(t.TempDir()) // the runs are saved under the working directory
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Duration: 2 * time.Second, Concurrency: 2, Analysis: analysis.Options{NoCompiler: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != len(Modes()) || len(res.Analyses) != len(res.Runs) || res.Comparison == nil {
		t.Fatalf("%d runs, %d analyses, comparison %v; want one run and analysis per mode and a comparison",
			len(res.Runs), len(res.Analyses), res.Comparison != nil)
	}
	for i, r := range res.Runs {
		if got := res.Analyses[i].Analysis.Run.ID; got != r.ID {
			t.Errorf("analysis %d is of run %s, want %s", i, got, r.ID)
		}
		if _, err := os.Stat(filepath.Join(run.DefaultRoot, r.ID, run.File)); err != nil {
			t.Errorf("run %s not saved under %s: %v", r.ID, run.DefaultRoot, err)
		}
	}
}
