package capture

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/testenv"
)

var allKinds = []string{KindCPU, KindAllocs, KindHeap, KindBlock, KindMutex, KindGoroutineStart, KindGoroutineEnd}

// checkSaved checks that each kind was saved without error, opens with
// profile.Parse, is valid and matches what run.json says.
func checkSaved(t *testing.T, run *Run, kinds ...string) {
	t.Helper()
	for _, kind := range kinds {
		pf, ok := run.Lookup(kind)
		if !ok || !run.Has(kind) || pf.Error != "" {
			t.Errorf("%s: want a saved profile, got %+v", kind, pf)
			continue
		}
		f, err := os.Open(run.Path(kind))
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: parse saved file: %v", kind, err)
			continue
		}
		if err := p.CheckValid(); err != nil {
			t.Errorf("%s: saved profile invalid: %v", kind, err)
		}
		if len(p.Sample) != pf.Samples {
			t.Errorf("%s: run.json says %d samples, file has %d", kind, pf.Samples, len(p.Sample))
		}
	}
}

func profileError(t *testing.T, run *Run, kind string) string {
	t.Helper()
	pf, ok := run.Lookup(kind)
	if !ok {
		t.Fatalf("%s: not recorded in run", kind)
	}
	return pf.Error
}

func hasNote(run *Run, substr string) bool {
	return slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, substr) })
}

func TestProfileDuration(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	dir := filepath.Join(t.TempDir(), "run")
	var progress atomic.Int64
	run, err := Profile(t.Context(), Options{
		Load: loadgen.Config{
			URL: tg.URL, Concurrency: 4, Duration: 2 * time.Second,
			Progress: func(loadgen.Progress) { progress.Add(1) },
		},
		OutDir:  dir,
		Args:    []string{"perfscope", "profile", "-H", "Authorization: Bearer s3cret", tg.URL},
		Version: "v0.0.0-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Interrupted || run.Load == nil || run.Load.Successes == 0 {
		t.Fatalf("want a completed load with successes, got interrupted=%v load=%+v", run.Interrupted, run.Load)
	}
	if progress.Load() == 0 {
		t.Error("the load's Progress callback was not passed through")
	}
	if run.PprofSource != PprofTarget || run.PprofURL != tg.PprofURL {
		t.Errorf("pprof = %s (%s), want %s (target)", run.PprofURL, run.PprofSource, tg.PprofURL)
	}
	// 2s load, 0.2s warm-up: the window is the 1.8s left, in whole seconds.
	if run.Warmup < 0.2 || run.Warmup > 0.5 || run.Window < 0.9 || run.Window > 1.6 {
		t.Errorf("warm-up %.2fs, window %.2fs; want about 0.2s and 1s", run.Warmup, run.Window)
	}
	checkSaved(t, run, allKinds...)
	for _, kind := range allKinds {
		if pf, _ := run.Lookup(kind); pf.Samples == 0 {
			t.Errorf("%s profile has no samples", kind)
		}
	}
	if len(run.Notes) != 0 {
		t.Errorf("unexpected notes: %q", run.Notes)
	}

	// The saved run reads back as it was returned.
	back, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != "run" || back.Target != run.Target || back.Load.Requests != run.Load.Requests ||
		len(back.Profiles) != len(allKinds) || back.Interrupted || back.Version != "v0.0.0-test" {
		t.Errorf("reloaded run differs: %+v", back)
	}
	if strings.Contains(strings.Join(back.Args, " "), "s3cret") {
		t.Errorf("run.json keeps a credential: %q", back.Args)
	}
	if _, err := exec.LookPath("git"); err == nil && back.GitCommit == "" {
		t.Error("no git commit recorded, though the tests run inside a repository")
	}
	// Atomic writes leave no temporary files behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(allKinds)+1 {
		t.Errorf("run directory holds %d files, want %d profiles and run.json", len(entries), len(allKinds))
	}

	// The allocs delta covers the window, not the process's lifetime.
	p, err := back.Open(KindAllocs)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(p.DurationNanos); d < 500*time.Millisecond || d > 2*time.Second {
		t.Errorf("allocs delta lasts %s, want about the 1s window", d)
	}

	// Every file opens with go tool pprof.
	goTool := testenv.Tool(t, "go", "install Go: its pprof reads the saved profiles")
	for _, kind := range []string{KindCPU, KindAllocs} {
		out, err := exec.Command(goTool, "tool", "pprof", "-top", back.Path(kind)).CombinedOutput()
		if err != nil {
			t.Errorf("go tool pprof -top %s: %v\n%s", back.Path(kind), err, out)
		}
	}
}

func TestProfileRequestBounded(t *testing.T) {
	tg := startTarget(t, targetSpec{}) // block and mutex profiling left off, as in most services
	run, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL + "?sleep=1ms", Concurrency: 2, Requests: 1500},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Load.Requests != 1500 {
		t.Errorf("load completed %d requests, want 1500", run.Load.Requests)
	}
	checkSaved(t, run, allKinds...)
	if pf, _ := run.Lookup(KindCPU); pf.Seconds < 1 {
		t.Errorf("cpu profile covers %gs, want at least 1s", pf.Seconds)
	}
	// The window runs until the load ends, within a second for the last
	// CPU request.
	loadEnd := run.Warmup + run.Window
	if got := run.Load.DurationSeconds; loadEnd < got-0.5 || loadEnd > got+1.5 {
		t.Errorf("window ends %.2fs into a %.2fs load", loadEnd, got)
	}
	if !hasNote(run, "block profile is empty") || !hasNote(run, "runtime.SetBlockProfileRate") {
		t.Errorf("no note on the empty block profile: %q", run.Notes)
	}
	if !hasNote(run, "mutex profile is empty") || !hasNote(run, "runtime.SetMutexProfileFraction") {
		t.Errorf("no note on the empty mutex profile: %q", run.Notes)
	}
}

func TestProfileBrokenEndpoints(t *testing.T) {
	tg := startTarget(t, targetSpec{
		BlockRate: 1, MutexFraction: 1,
		Broken: map[string]string{"heap": "html", "block": "404", "mutex": "garbage"},
	})
	run, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 2 * time.Second},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Load == nil || run.Load.Successes == 0 {
		t.Fatal("load result not saved")
	}
	checkSaved(t, run, KindCPU, KindAllocs, KindGoroutineStart, KindGoroutineEnd)
	for _, tc := range []struct{ kind, want string }{
		{KindHeap, "HTML page"},
		{KindBlock, "404 Not Found"},
		{KindMutex, "not a pprof profile"},
	} {
		msg := profileError(t, run, tc.kind)
		url := tg.PprofURL + tc.kind
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, url) || strings.Contains(msg, "\n") {
			t.Errorf("%s error = %q; want one line naming %s and saying %q", tc.kind, msg, url, tc.want)
		}
		if run.Has(tc.kind) {
			t.Errorf("%s: a broken endpoint left a file", tc.kind)
		}
	}
	back, err := LoadRun(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Open(KindHeap); err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Errorf("Open(heap) = %v; want the recorded HTML error", err)
	}
}

func TestProfileCPUBusy(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1, CPUBusy: true})
	run, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 2 * time.Second},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg := profileError(t, run, KindCPU); !strings.Contains(msg, "already in use") {
		t.Errorf("cpu error = %q; want the server's refusal", msg)
	}
	if !hasNote(run, "another CPU profile was already running") {
		t.Errorf("no note on the busy CPU profiler: %q", run.Notes)
	}
	checkSaved(t, run, KindAllocs, KindHeap, KindBlock, KindMutex, KindGoroutineStart, KindGoroutineEnd)
}

func TestProfileInterrupted(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "run")
	run, err := Profile(ctx, Options{
		Load: loadgen.Config{
			URL: tg.URL, Concurrency: 2, Duration: 20 * time.Second,
			// Ctrl-C 1.5s into the load, inside the profile window.
			Progress: func(p loadgen.Progress) {
				if p.Elapsed >= 1500*time.Millisecond {
					cancel()
				}
			},
		},
		Warmup: 500 * time.Millisecond,
		OutDir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := run.End.Sub(run.Load.Start); took > 8*time.Second {
		t.Errorf("Profile took %s to stop after an interruption at 1.5s", took)
	}
	back, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Interrupted || back.Load == nil || !back.Load.Interrupted {
		t.Errorf("run.json: interrupted=%v load=%+v; want an interrupted run with its load result", back.Interrupted, back.Load)
	}
	// The deltas over the part of the window before the interruption are
	// kept; the CPU profile in progress is not delivered by the server.
	checkSaved(t, back, KindAllocs, KindHeap, KindBlock, KindMutex, KindGoroutineStart, KindGoroutineEnd)
	if msg := profileError(t, back, KindCPU); !strings.Contains(msg, "interrupted") {
		t.Errorf("cpu error = %q, want interrupted", msg)
	}
}

func TestProfileTargetDies(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	var kill sync.Once
	run, err := Profile(t.Context(), Options{
		Load: loadgen.Config{
			URL: tg.URL, Concurrency: 2, Duration: 3 * time.Second,
			// The target crashes 1.5s into the load, inside the profile window.
			Progress: func(p loadgen.Progress) {
				if p.Elapsed >= 1500*time.Millisecond {
					kill.Do(tg.Kill)
				}
			},
		},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadRun(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Load == nil || back.Load.Successes == 0 || back.Load.Failures == 0 {
		t.Errorf("want the load's successes before and failures after the crash, got %+v", back.Load)
	}
	checkSaved(t, back, KindGoroutineStart)
	for _, kind := range []string{KindCPU, KindAllocs, KindGoroutineEnd} {
		if msg := profileError(t, back, kind); msg == "" {
			t.Errorf("%s: no error recorded for a profile the dead target could not give", kind)
		}
	}
	if !hasNote(back, "stopped answering") {
		t.Errorf("no note on the target's death: %q", back.Notes)
	}
}

func TestProfileFallbackPprof(t *testing.T) {
	tg := startTarget(t, targetSpec{PprofApart: true})
	run, err := Profile(t.Context(), Options{
		Load:             loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 1500 * time.Millisecond},
		FallbackPprofURL: tg.PprofURL,
		Warmup:           -1,
		OutDir:           filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.PprofSource != PprofFallback || run.PprofURL != tg.PprofURL {
		t.Errorf("pprof = %s (%s); want the fallback %s", run.PprofURL, run.PprofSource, tg.PprofURL)
	}
	if !hasNote(run, "has no pprof at") || !hasNote(run, "404") {
		t.Errorf("no note on the fallback: %q", run.Notes)
	}
	if run.Warmup > 0.2 {
		t.Errorf("warm-up %.2fs though turned off", run.Warmup)
	}
	checkSaved(t, run, KindCPU, KindAllocs, KindHeap, KindGoroutineStart, KindGoroutineEnd)
}

// TestProfilePreflight covers the failures reported before any load: no
// run directory is made for them.
func TestProfilePreflight(t *testing.T) {
	tg := startTarget(t, targetSpec{PprofApart: true})
	origin := strings.TrimSuffix(tg.URL, "/work")
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer auth.Close()

	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"unreachable target",
			Options{Load: loadgen.Config{URL: "http://127.0.0.1:1/", Duration: time.Second}},
			[]string{"127.0.0.1:1", "connection refused"}},
		{"given pprof 404",
			Options{Load: loadgen.Config{URL: tg.URL, Duration: time.Second}, PprofURL: origin + "/nope"},
			[]string{"pprof endpoint " + origin + "/nope/ is not usable", "404"}},
		{"no pprof anywhere",
			Options{Load: loadgen.Config{URL: tg.URL, Duration: time.Second}, FallbackPprofURL: "http://127.0.0.1:1/debug/pprof/"},
			[]string{"no pprof endpoint at " + origin + "/debug/pprof/ (404 Not Found", "nor at http://127.0.0.1:1/debug/pprof/", "--pprof"}},
		{"fallback off",
			Options{Load: loadgen.Config{URL: tg.URL, Duration: time.Second}, FallbackPprofURL: "-"},
			[]string{"no pprof endpoint at " + origin + "/debug/pprof/ (404 Not Found)"}},
		{"pprof needs credentials",
			Options{Load: loadgen.Config{URL: auth.URL, Duration: time.Second}, FallbackPprofURL: "-"},
			[]string{"401 Unauthorized", "-H"}},
		{"warm-up too long",
			Options{Load: loadgen.Config{URL: tg.URL, Duration: time.Second}, Warmup: 2 * time.Second},
			[]string{"warm-up 2s is not shorter than the load duration 1s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.OutDir = filepath.Join(t.TempDir(), "run")
			run, err := Profile(t.Context(), tc.opts)
			if err == nil || run != nil {
				t.Fatalf("want an error and no run, got %v, %+v", err, run)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if _, statErr := os.Stat(tc.opts.OutDir); statErr == nil {
				t.Error("a run directory was made for a run that never started")
			}
		})
	}

	t.Run("credentials from the load apply to pprof", func(t *testing.T) {
		o, target, err := Options{Load: loadgen.Config{URL: auth.URL, Header: http.Header{"Authorization": {"Bearer good"}}}}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		o.FallbackPprofURL = "-"
		_, err = findPprof(t.Context(), o, target)
		// Authorized, the server's 404 shows through.
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want the authorized 404", err)
		}
	})

	t.Run("load without profiles when allowed", func(t *testing.T) {
		run, err := Profile(t.Context(), Options{
			Load:             loadgen.Config{URL: tg.URL, Requests: 20},
			FallbackPprofURL: "-",
			AllowNoProfiles:  true,
			OutDir:           filepath.Join(t.TempDir(), "run"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if run.Load == nil || run.Load.Requests != 20 || len(run.Profiles) != 0 || run.PprofSource != "" {
			t.Errorf("want the load alone, got load=%+v profiles=%+v", run.Load, run.Profiles)
		}
		if len(run.Notes) != 1 || !strings.HasPrefix(run.Notes[0], "No profiles were taken: no pprof endpoint") {
			t.Errorf("notes = %q; want one saying why there are no profiles", run.Notes)
		}
	})
}
