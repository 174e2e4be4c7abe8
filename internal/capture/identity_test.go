package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// TestProfileIdentity runs two services on loopback, each in its own
// process with pprof on a listener of its own, and checks every pairing of
// load target and pprof endpoint: only the target's own endpoint is
// trusted, whether found or given.
func TestProfileIdentity(t *testing.T) {
	svc := startTarget(t, targetSpec{PprofApart: true})
	other := startTarget(t, targetSpec{PprofApart: true})
	load := func(url string) loadgen.Config {
		return loadgen.Config{URL: url, Concurrency: 2, Duration: 1500 * time.Millisecond}
	}
	for _, tc := range []struct {
		name                 string
		opts                 Options
		wantSource           string
		wantErr              bool
		wantNote, wantErrMsg string
	}{
		{name: "given, own", opts: Options{Load: load(svc.URL), PprofURL: svc.PprofURL}, wantSource: PprofGiven},
		{name: "given, another process's", opts: Options{Load: load(svc.URL), PprofURL: other.PprofURL},
			wantErr: true, wantErrMsg: "is not the process serving"},
		{name: "fallback, own", opts: Options{Load: load(svc.URL), FallbackPprofURL: svc.PprofURL}, wantSource: PprofFallback},
		{name: "fallback, another process's", opts: Options{Load: load(svc.URL), FallbackPprofURL: other.PprofURL},
			wantErr: true, wantErrMsg: "--pprof-unverified"},
		{name: "given, another process's, unverified", opts: Options{Load: load(svc.URL), PprofURL: other.PprofURL, PprofUnverified: true},
			wantSource: PprofGiven, wantNote: "not proven to belong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Warmup = -1
			o.OutDir = filepath.Join(t.TempDir(), "run")
			saved, err := Profile(t.Context(), o)
			if tc.wantErr {
				if saved != nil || !errors.Is(err, ErrNotTarget) || !strings.Contains(err.Error(), tc.wantErrMsg) {
					t.Fatalf("Profile = %v, %v; want no run and an error wrapping ErrNotTarget saying %q", saved, err, tc.wantErrMsg)
				}
				if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), svc.URL) || !strings.Contains(err.Error(), o.PprofURL+o.FallbackPprofURL) {
					t.Errorf("error %q: want one line naming the target and the endpoint", err)
				}
				if _, serr := os.Stat(o.OutDir); !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("run directory made for a refused endpoint: %v", serr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if saved.PprofSource != tc.wantSource {
				t.Errorf("pprof source %q, want %q", saved.PprofSource, tc.wantSource)
			}
			if saved.PprofUnverified != o.PprofUnverified {
				t.Errorf("run's pprof_unverified = %v, want %v", saved.PprofUnverified, o.PprofUnverified)
			}
			if tc.wantNote != "" && !hasNote(saved, tc.wantNote) {
				t.Errorf("notes %q lack %q", saved.Notes, tc.wantNote)
			}
			checkSaved(t, saved, run.KindCPU, run.KindGoroutineStart)
		})
	}
}

// TestProfileIdentityAllowNoProfiles: with --allow-no-profiles, an endpoint
// that is not the target's is left out and the load runs without profiles.
func TestProfileIdentityAllowNoProfiles(t *testing.T) {
	svc := startTarget(t, targetSpec{PprofApart: true})
	other := startTarget(t, targetSpec{PprofApart: true})
	saved, err := Profile(t.Context(), Options{
		Load:             loadgen.Config{URL: svc.URL, Concurrency: 1, Requests: 20},
		FallbackPprofURL: other.PprofURL,
		AllowNoProfiles:  true,
		OutDir:           filepath.Join(t.TempDir(), "run"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Profiles) != 0 || saved.PprofSource != "" {
		t.Errorf("profiles %+v from %q taken from another process", saved.Profiles, saved.PprofSource)
	}
	if !hasNote(saved, "is not the process serving") {
		t.Errorf("notes %q do not say why there are no profiles", saved.Notes)
	}
}
