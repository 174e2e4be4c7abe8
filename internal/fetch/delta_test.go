package fetch

import (
	"bytes"
	"errors"
	"net/http"
	"path"
	"runtime"
	rpprof "runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/expose"
)

// TestDeltaBetween subtracts two real cumulative allocation snapshots of
// this process: what was allocated in between shows, the rest cancels out.
func TestDeltaBetween(t *testing.T) {
	snap := func() Snapshot {
		t.Helper()
		runtime.GC() // the allocation profile is published at the end of a GC cycle
		var buf bytes.Buffer
		if err := rpprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return Snapshot{Profile: p, At: time.Now()}
	}
	start := snap()
	var keep [][]byte
	for range 200 {
		keep = append(keep, allocateForDelta())
	}
	runtime.KeepAlive(keep)
	end := snap()

	d, err := DeltaBetween(start, end)
	if err != nil {
		t.Fatal(err)
	}
	if d.DurationNanos != end.At.Sub(start.At).Nanoseconds() || d.TimeNanos != start.At.UnixNano() {
		t.Errorf("delta timed %d+%d; want the interval between the snapshots", d.TimeNanos, d.DurationNanos)
	}
	if len(d.Sample) >= len(end.Profile.Sample) {
		t.Errorf("delta has %d samples, the cumulative end %d; want fewer", len(d.Sample), len(end.Profile.Sample))
	}
	found := false
	for _, s := range d.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if strings.HasSuffix(line.Function.Name, "allocateForDelta") && s.Value[1] > 0 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("the allocations made between the snapshots are not in the delta")
	}
	if len(start.Profile.Sample) == 0 {
		t.Fatal("empty start snapshot")
	}
}

//go:noinline
func allocateForDelta() []byte { return make([]byte, 64<<10) }

// customProfile is a profile of this test binary's own: net/http/pprof
// serves it, but keeps no deltas of it.
var customProfile = rpprof.NewProfile("perfscope_fetch_test")

// TestDelta asks real servers for deltas through ?seconds=: net/http/pprof
// and expose serve them, timed over the window; a server that ignores the
// parameter, or refuses it for a profile, is told apart (ErrNoDelta) from
// any other failure.
func TestDelta(t *testing.T) {
	ex, err := expose.Start(t.Context(), expose.Options{Addr: "127.0.0.1:0", MaxSeconds: 1, BlockProfileRate: -1, MutexProfileFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	pprofBase := serve(t, pprofMux()).URL + "/debug/pprof/"
	// A server of profiles that knows nothing of ?seconds=: the
	// cumulative profile, whatever the query.
	cumulative := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rpprof.Lookup(path.Base(r.URL.Path)).WriteTo(w, 0)
	})).URL + "/debug/pprof/"

	for _, tc := range []struct {
		name, base, profile string
		window              time.Duration
		want                string // "" for a delta, "no delta", else part of the error
	}{
		{"net/http/pprof allocs", pprofBase, "allocs", time.Second, ""},
		{"net/http/pprof goroutine", pprofBase, "goroutine", time.Second, ""},
		{"expose block", ex.URL(), "block", time.Second, ""},
		{"ignores seconds", cumulative, "heap", time.Second, "no delta"},
		{"custom profile", pprofBase, customProfile.Name(), time.Second, "no delta"},
		{"window over expose's maximum", ex.URL(), "heap", 2 * time.Second, "400 Bad Request: seconds=2 is more than the maximum of 1"},
		{"fraction of a second", pprofBase, "heap", 1500 * time.Millisecond, "whole number of seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEndpoint(t, tc.base, EndpointOptions{})
			p, err := e.Delta(t.Context(), tc.profile, tc.window)
			switch tc.want {
			case "":
				if err != nil {
					t.Fatal(err)
				}
				if err := p.CheckValid(); err != nil || p.DurationNanos <= 0 {
					t.Errorf("delta lasts %dns, valid: %v; want a valid profile timed over the window", p.DurationNanos, err)
				}
			case "no delta":
				if !errors.Is(err, ErrNoDelta) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err = %v; want one line wrapping ErrNoDelta", err)
				}
			default:
				if err == nil || errors.Is(err, ErrNoDelta) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v; want %q, not ErrNoDelta", err, tc.want)
				}
			}
		})
	}

	for base, want := range map[string]bool{pprofBase: true, cumulative: false} {
		got, err := mustEndpoint(t, base, EndpointOptions{}).SupportsDelta(t.Context())
		if err != nil || got != want {
			t.Errorf("SupportsDelta(%s) = %v, %v; want %v", base, got, err, want)
		}
	}
	if _, err := mustEndpoint(t, "http://127.0.0.1:1/debug/pprof/", EndpointOptions{}).SupportsDelta(t.Context()); err == nil {
		t.Error("SupportsDelta of nothing listening: no error")
	}
}
