package analysis_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
)

// committedRuns are real saved runs: the findings' bad and good programs
// under their loads, the examples under perfscope's own load.
func committedRuns(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "findings", "testdata", "runs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, filepath.Join("testdata", "leftpad-naive"))
	if len(dirs) < 10 {
		t.Fatalf("only %d committed runs found: %v", len(dirs), dirs)
	}
	return dirs
}

// byHand builds the Input of a saved run's directory as a caller other
// than the run package would: every <kind>.pb.gz read through fetch's
// bounded reader, and the window, per-profile seconds, load and target
// taken from run.json as plain values. It has no run record.
func byHand(t *testing.T, dir string) analysis.Input {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("profiles in %s: %v, %v", dir, files, err)
	}
	in := analysis.Input{}
	in.Profiles = map[string]*profile.Profile{}
	for _, f := range files {
		p, _, err := fetch.ParseFile(t.Context(), f, fetch.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		in.Profiles[strings.TrimSuffix(filepath.Base(f), ".pb.gz")] = p
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Target     string          `json:"target"`
		TargetCPUs int             `json:"target_cpus"`
		Start      time.Time       `json:"start"`
		Warmup     float64         `json:"warmup_seconds"`
		Window     float64         `json:"profile_window_seconds"`
		Load       *loadgen.Result `json:"load"`
		Notes      []string        `json:"notes"`
		Profiles   []struct {
			Kind    string  `json:"kind"`
			Seconds float64 `json:"seconds"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	in.Start = rec.Start.Add(time.Duration(rec.Warmup * float64(time.Second)))
	in.Seconds = rec.Window
	in.KindSeconds = map[string]float64{}
	for _, pf := range rec.Profiles {
		if pf.Seconds > 0 {
			in.KindSeconds[pf.Kind] = pf.Seconds
		}
	}
	in.Load, in.Target, in.TargetCPUs, in.Notes = rec.Load, rec.Target, rec.TargetCPUs, rec.Notes
	return in
}

// tables is an analysis as JSON without its run record, which differs by
// construction (a saved run's id, directory and command line): the
// tables, per-request figures, listings, notes and warnings.
func tables(t *testing.T, a *profiles.Analysis) map[string]any {
	t.Helper()
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "run")
	return m
}

// The options of the tests: no build of the source for the compiler's
// reasons (which would take seconds per run), listings from this checkout.
var opts = analysis.Options{NoCompiler: true, List: 2}

func source(in analysis.Input) analysis.Input {
	in.Source = analysis.Source{Dir: filepath.Join("..", ".."), Confined: true}
	return in
}

// TestRunAndProfileSetAgree analyses each committed run through the run
// adapter and as a set of profiles built by hand from the same files: the
// pipeline's input is the profiles and their window, nothing else of the
// run, so the findings and the tables are the same.
func TestRunAndProfileSetAgree(t *testing.T) {
	for _, dir := range committedRuns(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r, err := run.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			viaRun := analysis.Analyze(t.Context(), source(analysis.FromRun(r)), opts)
			viaSet := analysis.Analyze(t.Context(), source(byHand(t, dir)), opts)
			if len(viaRun.Analysis.Profiles) == 0 {
				t.Fatalf("no profile analysed: %v", viaRun.Warnings)
			}
			if !reflect.DeepEqual(viaRun.Findings, viaSet.Findings) {
				t.Errorf("findings differ:\nrun: %v\nset: %v", ruleIDs(viaRun.Findings), ruleIDs(viaSet.Findings))
				for i := range min(len(viaRun.Findings), len(viaSet.Findings)) {
					if !reflect.DeepEqual(viaRun.Findings[i], viaSet.Findings[i]) {
						t.Errorf("finding %d:\nrun: %+v\nset: %+v", i, viaRun.Findings[i], viaSet.Findings[i])
					}
				}
			}
			if a, b := tables(t, viaRun.Analysis), tables(t, viaSet.Analysis); !reflect.DeepEqual(a, b) {
				for k := range a {
					if !reflect.DeepEqual(a[k], b[k]) {
						t.Errorf("analysis field %q differs:\nrun: %v\nset: %v", k, a[k], b[k])
					}
				}
				for k := range b {
					if _, ok := a[k]; !ok {
						t.Errorf("analysis field %q only in the set's: %v", k, b[k])
					}
				}
			}
			ra, sa := viaRun.Analysis.Run, viaSet.Analysis.Run
			if ra.Window != sa.Window || ra.Target != sa.Target || !reflect.DeepEqual(ra.Load, sa.Load) {
				t.Errorf("the set's record has window %v, target %q, load %v; the run's %v, %q, %v",
					sa.Window, sa.Target, sa.Load, ra.Window, ra.Target, ra.Load)
			}
			if sa.ID != "" || sa.Dir != "" {
				t.Errorf("a set of profiles that is no run got run id %q, directory %q", sa.ID, sa.Dir)
			}
		})
	}
}

func ruleIDs(fs []findings.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule)
	}
	return ids
}

// TestAnalyzeWithoutLoad analyses a real run's profiles with the load
// removed, as a profile store hands in a merged range of a live service:
// the tables and findings rest on the profiles and stay the same; nothing
// is said of throughput, latency or requests, and the report says why.
func TestAnalyzeWithoutLoad(t *testing.T) {
	dir := filepath.Join("..", "findings", "testdata", "runs", "leftpad-naive")
	r, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Load == nil {
		t.Fatal("the committed run has no load result to remove")
	}
	loaded := analysis.Analyze(t.Context(), source(analysis.FromRun(r)), opts)
	in := byHand(t, dir)
	in.Load = nil
	unloaded := analysis.Analyze(t.Context(), source(in), opts)

	if len(loaded.Findings) == 0 || !reflect.DeepEqual(loaded.Findings, unloaded.Findings) {
		t.Errorf("findings with the load %v, without %v; want the same, from the profiles", ruleIDs(loaded.Findings), ruleIDs(unloaded.Findings))
	}
	if loaded.Analysis.PerRequest == nil {
		t.Fatal("with the load: no per-request figures")
	}
	a := unloaded.Analysis
	if a.PerRequest != nil || a.Run.Load != nil {
		t.Errorf("without a load: per request %+v, load %+v", a.PerRequest, a.Run.Load)
	}
	for _, section := range []string{"cpu", "allocs", "block", "mutex", "goroutines", "routes", "source"} {
		if !reflect.DeepEqual(tables(t, loaded.Analysis)[section], tables(t, a)[section]) {
			t.Errorf("section %s changed without the load", section)
		}
	}
	if !strings.Contains(strings.Join(a.Notes, "\n"), profiles.NoLoadNote) {
		t.Errorf("notes %q do not say that there is no load result", a.Notes)
	}
	if strings.Contains(strings.Join(loaded.Analysis.Notes, "\n"), profiles.NoLoadNote) {
		t.Errorf("notes %q say there is no load result, with one", loaded.Analysis.Notes)
	}

	var text, js bytes.Buffer
	if err := report.Write(&text, report.Text, a, unloaded.Findings); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&js, report.JSON, a, unloaded.Findings); err != nil {
		t.Fatal(err)
	}
	var withLoad bytes.Buffer
	if err := report.Write(&withLoad, report.Text, loaded.Analysis, loaded.Findings); err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"req/s", "p99", "(profile window)"} {
		if !strings.Contains(withLoad.String(), claim) {
			t.Errorf("the report with the load lacks %q, so its absence below proves nothing", claim)
		}
		if strings.Contains(text.String(), claim) {
			t.Errorf("the report without a load claims %q:\n%s", claim, text.String())
		}
	}
	if !strings.Contains(text.String(), profiles.NoLoadNote) {
		t.Errorf("the report without a load does not say so:\n%s", text.String())
	}
	var out map[string]any
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"load", "per_request"} {
		if _, ok := out[field]; ok {
			t.Errorf("JSON without a load has %q", field)
		}
	}
}

// TestIdleWithoutLoad checks that the not-bottleneck finding speaks of the
// load only when there was one: a live service's profiles say nothing of
// how much was asked of it.
func TestIdleWithoutLoad(t *testing.T) {
	r, err := run.Load(filepath.Join("..", "findings", "testdata", "runs", "idle-bad"))
	if err != nil {
		t.Fatal(err)
	}
	idle := func(in analysis.Input) string {
		t.Helper()
		for _, f := range analysis.Analyze(t.Context(), in, opts).Findings {
			if f.Rule == "not-bottleneck" && f.Resource == findings.Idle {
				return report.FindingText(f.Summary)
			}
		}
		t.Fatal("no not-bottleneck finding on the idle run")
		return ""
	}
	in := analysis.FromRun(r)
	in.Load = nil
	if s := idle(in); strings.Contains(s, "load") {
		t.Errorf("without a load result the finding speaks of the load: %s", s)
	}
	in.Load = &loadgen.Result{Requests: 100, Successes: 100, Throughput: 10}
	if s := idle(in); !strings.Contains(s, "the load was too light") {
		t.Errorf("with a load result the finding does not say it was too light: %s", s)
	}
}
