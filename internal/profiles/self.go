package profiles

import (
	"strings"

	"github.com/google/pprof/profile"
)

// profilerPackages are the packages whose frames mark a sample as the
// profiler's own work: serving /debug/pprof/ requests, sleeping through a
// CPU profile's window, encoding profiles. A capture always runs while they
// do, so without this a report would rank the act of measuring among the
// target's costs (a CPU profile request alone blocks for the whole window).
var profilerPackages = []string{
	"net/http/pprof.",
	"runtime/pprof.",
	"github.com/felixge/fgprof.",
}

// isProfilerFunc reports whether name belongs to the profiling machinery.
// runtime/pprof.Do and its label helpers run request code, so they do not.
func isProfilerFunc(name string) bool {
	for _, p := range profilerPackages {
		if strings.HasPrefix(name, p) {
			return !strings.HasPrefix(name, "runtime/pprof.Do") &&
				!strings.HasPrefix(name, "runtime/pprof.WithLabels") &&
				!strings.HasPrefix(name, "runtime/pprof.Labels") &&
				!strings.HasPrefix(name, "runtime/pprof.SetGoroutineLabels")
		}
	}
	return false
}

// DropProfilerSamples returns p without the samples taken while the target
// served its own profiles, and how many there were.
func DropProfilerSamples(p *profile.Profile) (*profile.Profile, int) {
	own := map[uint64]bool{}
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil && isProfilerFunc(ln.Function.Name) {
				own[loc.ID] = true
			}
		}
	}
	if len(own) == 0 {
		return p, 0
	}
	dropped := 0
	kept := FilterSamples(p, func(s *profile.Sample) bool {
		for _, loc := range s.Location {
			if own[loc.ID] {
				dropped++
				return false
			}
		}
		return true
	})
	return kept, dropped
}
