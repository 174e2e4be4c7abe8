package expose

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// Each of these blocks for 5ms, longer than the default block profile rate
// of 1ms, so the event is recorded whenever block profiling is on. Their
// names tell in a profile when the event happened.
func blockedWhileIdle()        { <-time.After(5 * time.Millisecond) }
func blockedDuringBlockDelta() { <-time.After(5 * time.Millisecond) }
func blockedDuringCPUProfile() { <-time.After(5 * time.Millisecond) }
func blockedAfterCollecting()  { <-time.After(5 * time.Millisecond) }
func blockedAlways()           { <-time.After(5 * time.Millisecond) }

// blockProfileHas reports whether the cumulative block profile has a
// sample whose stack goes through fn.
func blockProfileHas(t *testing.T, s *Server, fn string) bool {
	t.Helper()
	code, body := get(t, nil, s.URL()+"block", "")
	if code != http.StatusOK {
		t.Fatalf("block profile: status %d: %s", code, body)
	}
	return profileHas(t, body, fn)
}

// profileHas reports whether the profile in body has a sample whose stack
// goes through a function named *.fn.
func profileHas(t *testing.T, body []byte, fn string) bool {
	t.Helper()
	p, err := profile.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range p.Sample {
		for _, loc := range smp.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.HasSuffix(line.Function.Name, "."+fn) {
					return true
				}
			}
		}
	}
	return false
}

// samplingOn reports whether the server has block profiling on.
func samplingOn(s *Server) bool {
	s.sampler.mu.Lock()
	defer s.sampler.mu.Unlock()
	return s.sampler.on
}

// waitSampling waits, at most 10 seconds, until the server's block
// profiling is on (or off).
func waitSampling(t *testing.T, s *Server, on bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for samplingOn(s) != on {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("block profiling on = %v after 10s, want %v", !on, on)
		}
	}
}

// TestBlockProfileWhileCollecting checks that block profiling is on while a
// profile is being collected, and for the linger after, and only then.
func TestBlockProfileWhileCollecting(t *testing.T) {
	defer func(d time.Duration) { blockProfileLinger = d }(blockProfileLinger)
	blockProfileLinger = 100 * time.Millisecond
	s := start(t, Options{})
	if samplingOn(s) {
		t.Fatal("block profiling on before anything was collected")
	}
	blockedWhileIdle()

	for _, tt := range []struct {
		path    string
		blocked func()
		fn      string
	}{
		{"block?seconds=1", blockedDuringBlockDelta, "blockedDuringBlockDelta"},
		{"profile?seconds=1", blockedDuringCPUProfile, "blockedDuringCPUProfile"},
	} {
		path := tt.path
		var wg sync.WaitGroup
		var code int
		var body []byte
		var err error
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			code, body, err = request(nil, s.URL()+path, "")
		})
		waitSampling(t, s, true)
		// Block until the response is in, so that events fall inside the
		// window however late the handler starts it.
		for collecting := true; collecting; {
			tt.blocked()
			select {
			case <-done:
				collecting = false
			default:
			}
		}
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", path, code, body)
		}
		if path == "block?seconds=1" && !profileHas(t, body, tt.fn) {
			t.Errorf("%s: the delta lacks the event during the window", path)
		}
		if !blockProfileHas(t, s, tt.fn) {
			t.Errorf("during %s: the event is not in the cumulative block profile", path)
		}
		waitSampling(t, s, false)
	}

	blockedAfterCollecting()
	if blockProfileHas(t, s, "blockedWhileIdle") {
		t.Error("an event before any collection was recorded")
	}
	if blockProfileHas(t, s, "blockedAfterCollecting") {
		t.Error("an event after the collections and the linger was recorded")
	}
}

// TestBlockProfileAlways checks that with BlockProfileAlways block
// profiling is on without any collection, and off after Close.
func TestBlockProfileAlways(t *testing.T) {
	s := start(t, Options{BlockProfileAlways: true})
	if s.sampler != nil {
		t.Fatal("a sampler with BlockProfileAlways")
	}
	blockedAlways()
	if !blockProfileHas(t, s, "blockedAlways") {
		t.Error("with BlockProfileAlways an event outside any collection was not recorded")
	}
}
