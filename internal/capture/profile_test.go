package capture

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/testenv"
)

var allKinds = []string{run.KindCPU, run.KindAllocs, run.KindHeap, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd}

// checkSaved checks that each kind was saved without error, opens with
// profile.Parse, is valid and matches what run.json says.
func checkSaved(t *testing.T, saved *run.Run, kinds ...string) {
	t.Helper()
	for _, kind := range kinds {
		pf, ok := saved.Lookup(kind)
		if !ok || !saved.Has(kind) || pf.Error != "" {
			t.Errorf("%s: want a saved profile, got %+v", kind, pf)
			continue
		}
		f, err := os.Open(saved.Path(kind))
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

func profileError(t *testing.T, saved *run.Run, kind string) string {
	t.Helper()
	pf, ok := saved.Lookup(kind)
	if !ok {
		t.Fatalf("%s: not recorded in run", kind)
	}
	return pf.Error
}

func hasNote(saved *run.Run, substr string) bool {
	return slices.ContainsFunc(saved.Notes, func(n string) bool { return strings.Contains(n, substr) })
}

func TestProfileDuration(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	dir := filepath.Join(t.TempDir(), "run")
	var progress atomic.Int64
	saved, err := Profile(t.Context(), Options{
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
	if saved.Interrupted || saved.Load == nil || saved.Load.Successes == 0 {
		t.Fatalf("want a completed load with successes, got interrupted=%v load=%+v", saved.Interrupted, saved.Load)
	}
	if progress.Load() == 0 {
		t.Error("the load's Progress callback was not passed through")
	}
	if saved.PprofSource != PprofTarget || saved.PprofURL != tg.PprofURL {
		t.Errorf("pprof = %s (%s), want %s (target)", saved.PprofURL, saved.PprofSource, tg.PprofURL)
	}
	// 2s load, 0.2s warm-up: the window is the 1.8s left, in whole seconds.
	// A busy machine may stretch either, never beyond the run itself.
	if span := saved.End.Sub(saved.Start).Seconds(); saved.Warmup < 0.2 || saved.Window < 0.9 || saved.Warmup+saved.Window > span {
		t.Errorf("warm-up %.2fs, window %.2fs in a %.2fs run; want at least 0.2s and 1s within the run", saved.Warmup, saved.Window, span)
	}
	checkSaved(t, saved, allKinds...)
	for _, kind := range allKinds {
		if pf, _ := saved.Lookup(kind); pf.Samples == 0 {
			t.Errorf("%s profile has no samples", kind)
		}
	}
	if len(saved.Notes) != 0 {
		t.Errorf("unexpected notes: %q", saved.Notes)
	}

	// The saved run reads back as it was returned.
	back, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != "run" || back.Target != saved.Target || back.Load.Requests != saved.Load.Requests ||
		len(back.Profiles) != len(allKinds) || back.Interrupted || back.Version != "v0.0.0-test" ||
		back.TargetCPUs != runtime.NumCPU() {
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
	p, err := back.Open(run.KindAllocs)
	if err != nil {
		t.Fatal(err)
	}
	if d, span := time.Duration(p.DurationNanos), back.End.Sub(back.Start); d < 500*time.Millisecond || d > span {
		t.Errorf("allocs delta lasts %s, want about the 1s window, within the %s run", d, span)
	}

	// Every file opens with go tool pprof.
	goTool := testenv.Tool(t, "go", "install Go: its pprof reads the saved profiles")
	for _, kind := range []string{run.KindCPU, run.KindAllocs} {
		out, err := exec.Command(goTool, "tool", "pprof", "-top", back.Path(kind)).CombinedOutput()
		if err != nil {
			t.Errorf("go tool pprof -top %s: %v\n%s", back.Path(kind), err, out)
		}
	}
}

func TestProfileRequestBounded(t *testing.T) {
	tg := startTarget(t, targetSpec{}) // block and mutex profiling left off, as in most services
	saved, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL + "?sleep=1ms", Concurrency: 2, Requests: 1500},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Load.Requests != 1500 {
		t.Errorf("load completed %d requests, want 1500", saved.Load.Requests)
	}
	checkSaved(t, saved, allKinds...)
	if pf, _ := saved.Lookup(run.KindCPU); pf.Seconds < 1 {
		t.Errorf("cpu profile covers %gs, want at least 1s", pf.Seconds)
	}
	// The window runs until the load ends, within a second for the last
	// CPU request.
	loadEnd := saved.Warmup + saved.Window
	if got := saved.Load.DurationSeconds; loadEnd < got-0.5 || loadEnd > got+1.5 {
		t.Errorf("window ends %.2fs into a %.2fs load", loadEnd, got)
	}
	if !hasNote(saved, "block profile is empty") || !hasNote(saved, "runtime.SetBlockProfileRate") {
		t.Errorf("no note on the empty block profile: %q", saved.Notes)
	}
	if !hasNote(saved, "mutex profile is empty") || !hasNote(saved, "runtime.SetMutexProfileFraction") {
		t.Errorf("no note on the empty mutex profile: %q", saved.Notes)
	}
}

func TestProfileBrokenEndpoints(t *testing.T) {
	tg := startTarget(t, targetSpec{
		BlockRate: 1, MutexFraction: 1,
		Broken: map[string]string{"heap": "html", "block": "404", "mutex": "garbage"},
	})
	saved, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 2 * time.Second},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Load == nil || saved.Load.Successes == 0 {
		t.Fatal("load result not saved")
	}
	checkSaved(t, saved, run.KindCPU, run.KindAllocs, run.KindGoroutineStart, run.KindGoroutineEnd)
	for _, tc := range []struct{ kind, want string }{
		{run.KindHeap, "HTML page"},
		{run.KindBlock, "404 Not Found"},
		{run.KindMutex, "not a pprof profile"},
	} {
		msg := profileError(t, saved, tc.kind)
		url := tg.PprofURL + tc.kind
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, url) || strings.Contains(msg, "\n") {
			t.Errorf("%s error = %q; want one line naming %s and saying %q", tc.kind, msg, url, tc.want)
		}
		if saved.Has(tc.kind) {
			t.Errorf("%s: a broken endpoint left a file", tc.kind)
		}
	}
	back, err := run.Load(saved.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Open(run.KindHeap); err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Errorf("Open(heap) = %v; want the recorded HTML error", err)
	}
}

func TestProfileCPUBusy(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1, CPUBusy: true})
	saved, err := Profile(t.Context(), Options{
		Load:   loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 2 * time.Second},
		OutDir: filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg := profileError(t, saved, run.KindCPU); !strings.Contains(msg, "already in use") {
		t.Errorf("cpu error = %q; want the server's refusal", msg)
	}
	if !hasNote(saved, "another CPU profile was already running") {
		t.Errorf("no note on the busy CPU profiler: %q", saved.Notes)
	}
	checkSaved(t, saved, run.KindAllocs, run.KindHeap, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd)
}

func TestProfileInterrupted(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "run")
	saved, err := Profile(ctx, Options{
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
	if took := saved.End.Sub(saved.Load.Start); took > 8*time.Second {
		t.Errorf("Profile took %s to stop after an interruption at 1.5s", took)
	}
	back, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Interrupted || back.Load == nil || !back.Load.Interrupted {
		t.Errorf("run.json: interrupted=%v load=%+v; want an interrupted run with its load result", back.Interrupted, back.Load)
	}
	// Everything over the part of the window before the interruption is
	// kept, the CPU profile too: the chunk in progress is waited for.
	checkSaved(t, back, run.KindCPU, run.KindAllocs, run.KindHeap, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd)
	if pf, _ := back.Lookup(run.KindCPU); pf.Seconds < 1 || pf.Seconds > DefaultCPUChunk.Seconds() {
		t.Errorf("cpu profile covers %gs; the interruption came 1s into the window, inside the first %s chunk", pf.Seconds, DefaultCPUChunk)
	}
}

func TestProfileTargetDies(t *testing.T) {
	tg := startTarget(t, targetSpec{BlockRate: 1, MutexFraction: 1})
	var kill sync.Once
	saved, err := Profile(t.Context(), Options{
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
	back, err := run.Load(saved.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Load == nil || back.Load.Successes == 0 || back.Load.Failures == 0 {
		t.Errorf("want the load's successes before and failures after the crash, got %+v", back.Load)
	}
	checkSaved(t, back, run.KindGoroutineStart)
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindGoroutineEnd} {
		// Each error names the profile as the run does (goroutine_end, not
		// the endpoint's name).
		if msg := profileError(t, back, kind); !strings.Contains(msg, "fetch "+kind+" profile from ") {
			t.Errorf("%s: error %q; want one naming the profile the dead target could not give", kind, msg)
		}
	}
	if !hasNote(back, "stopped answering") {
		t.Errorf("no note on the target's death: %q", back.Notes)
	}
}

func TestProfileFallbackPprof(t *testing.T) {
	tg := startTarget(t, targetSpec{PprofApart: true})
	saved, err := Profile(t.Context(), Options{
		Load:             loadgen.Config{URL: tg.URL, Concurrency: 2, Duration: 1500 * time.Millisecond},
		FallbackPprofURL: tg.PprofURL,
		Warmup:           -1,
		OutDir:           filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if saved.PprofSource != PprofFallback || saved.PprofURL != tg.PprofURL {
		t.Errorf("pprof = %s (%s); want the fallback %s", saved.PprofURL, saved.PprofSource, tg.PprofURL)
	}
	if !hasNote(saved, "has no pprof at") || !hasNote(saved, "404") {
		t.Errorf("no note on the fallback: %q", saved.Notes)
	}
	if saved.Warmup > 0.2 {
		t.Errorf("warm-up %.2fs though turned off", saved.Warmup)
	}
	checkSaved(t, saved, run.KindCPU, run.KindAllocs, run.KindHeap, run.KindGoroutineStart, run.KindGoroutineEnd)
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
			saved, err := Profile(t.Context(), tc.opts)
			if err == nil || saved != nil {
				t.Fatalf("want an error and no run, got %v, %+v", err, saved)
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
		saved, err := Profile(t.Context(), Options{
			Load:             loadgen.Config{URL: tg.URL, Requests: 20},
			FallbackPprofURL: "-",
			AllowNoProfiles:  true,
			OutDir:           filepath.Join(t.TempDir(), "run"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if saved.Load == nil || saved.Load.Requests != 20 || len(saved.Profiles) != 0 || saved.PprofSource != "" {
			t.Errorf("want the load alone, got load=%+v profiles=%+v", saved.Load, saved.Profiles)
		}
		if len(saved.Notes) != 1 || !strings.HasPrefix(saved.Notes[0], "No profiles were taken: no pprof endpoint") {
			t.Errorf("notes = %q; want one saying why there are no profiles", saved.Notes)
		}
	})
}

// TestProfileRecordsURLsRedacted: secrets in the target's and the pprof
// endpoint's query strings reach the service but not run.json, which keeps
// the parameters' names.
func TestProfileRecordsURLsRedacted(t *testing.T) {
	tg := startTarget(t, targetSpec{})
	target := tg.URL + "?sleep=100ms&api_key=s3cret"
	dir := filepath.Join(t.TempDir(), "run")
	saved, err := Profile(t.Context(), Options{
		Load:     loadgen.Config{URL: target, Concurrency: 1, Requests: 12},
		PprofURL: tg.PprofURL + "?token=p4ss",
		OutDir:   dir,
		Args:     []string{"perfscope", "profile", "--pprof", tg.PprofURL + "?token=p4ss", target},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The service was asked with the real query: each request slept.
	if got := saved.Load.DurationSeconds; got < 1.2 {
		t.Errorf("12 requests of ?sleep=100ms, one at a time, took %.2fs: the load did not send the query as given", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, run.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret", "p4ss", "100ms"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("run.json holds %q:\n%s", secret, data)
		}
	}
	back, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantTarget := tg.URL + "?sleep=REDACTED&api_key=REDACTED"
	if back.Target != wantTarget || back.Load.URL != wantTarget {
		t.Errorf("target %q, load url %q; want both %q", back.Target, back.Load.URL, wantTarget)
	}
	if want := tg.PprofURL + "?token=REDACTED"; back.PprofURL != want {
		t.Errorf("pprof_url %q, want %q", back.PprofURL, want)
	}
	for _, pf := range back.Profiles {
		if !strings.HasSuffix(pf.URL, "?token=REDACTED") {
			t.Errorf("%s profile url %q does not keep the parameter's name, redacted", pf.Kind, pf.URL)
		}
	}
	if got := strings.Join(back.Args, " "); !strings.Contains(got, "?token=REDACTED") || !strings.Contains(got, "?sleep=REDACTED&api_key=REDACTED") {
		t.Errorf("args %q", got)
	}
}
