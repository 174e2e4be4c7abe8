package profiles

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// Sample types of the Go runtime's profiles, by the names pprof gives them.
const (
	SampleCPU          = "cpu"           // nanoseconds, CPU profile
	SampleCPUCount     = "samples"       // count, CPU profile
	SampleAllocObjects = "alloc_objects" // count, allocs and heap profiles
	SampleAllocSpace   = "alloc_space"   // bytes, allocs and heap profiles
	SampleInuseObjects = "inuse_objects" // count, heap profile
	SampleInuseSpace   = "inuse_space"   // bytes, heap profile
	SampleContentions  = "contentions"   // count, block and mutex profiles
	SampleDelay        = "delay"         // nanoseconds, block and mutex profiles
	SampleGoroutine    = "goroutine"     // count, goroutine profile
)

// SampleIndex finds the value index of a sample type; "" means the
// profile's default (its DefaultSampleType, else the last one, as pprof
// chooses). It is how every table, rule and listing picks the value it
// reads, so they all read the same one.
func SampleIndex(p *profile.Profile, sampleType string) (int, error) {
	if p == nil {
		return 0, fmt.Errorf("no profile")
	}
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	if sampleType == "" {
		sampleType = p.DefaultSampleType
	}
	if sampleType == "" {
		return len(p.SampleType) - 1, nil
	}
	names := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		if st.Type == sampleType {
			return i, nil
		}
		names[i] = st.Type
	}
	return 0, fmt.Errorf("profile has no %q samples (it has %s)", sampleType, strings.Join(names, ", "))
}

// sampleIndex is SampleIndex under the name the package's tests use.
func sampleIndex(p *profile.Profile, sampleType string) (int, error) {
	return SampleIndex(p, sampleType)
}

// SampleTotal is the sum of value i over all samples, as pprof's total:
// absolute values, so a diff profile's total is its volume of change.
// Every share of value i is a fraction of it.
func SampleTotal(p *profile.Profile, i int) int64 {
	var t int64
	for _, s := range p.Sample {
		t += abs(s.Value[i])
	}
	return t
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Share is part/total as a fraction, 0 when total is 0: how every share
// a table, a listing or a finding shows is computed.
func Share(part, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// A Frame is one function activation on a sample's stack. Inlined calls
// are frames of their own, as in pprof.
type Frame struct {
	fn   *profile.Function
	line int64
	addr uint64 // for frames without symbols
}

// Function is the frame's function, nil when the location has no symbols.
func (f Frame) Function() *profile.Function { return f.fn }

// Line is the line the Frame was at, 0 when unknown.
func (f Frame) Line() int64 { return f.line }

// Name is the function's name, or the address for a Frame without symbols.
func (f Frame) Name() string {
	if f.fn == nil {
		return fmt.Sprintf("0x%x", f.addr)
	}
	return f.fn.Name
}

// File is the function's file as the profile records it, "" when unknown.
func (f Frame) File() string {
	if f.fn == nil {
		return ""
	}
	return f.fn.Filename
}

// Frames returns the frames of s, innermost (leaf) first. A location
// without symbol information yields one Frame with no function so that
// stack depth, and the leaf, stay right.
func Frames(s *profile.Sample) []Frame {
	n := 0
	for _, loc := range s.Location {
		n += max(1, len(loc.Line))
	}
	fs := make([]Frame, 0, n)
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			fs = append(fs, Frame{addr: loc.Address})
			continue
		}
		// Line[0] is the innermost of the calls inlined at this address.
		for _, ln := range loc.Line {
			fs = append(fs, Frame{fn: ln.Function, line: ln.Line})
		}
	}
	return fs
}

// frames is Frames under the name the package's tests use.
func frames(s *profile.Sample) []Frame { return Frames(s) }

// UserFrame is the index of the Frame a sample is charged to when the
// question is "which line of mine": the innermost Frame of fs (innermost
// first) outward of index from (-1 starts at the leaf) whose class is
// User; -1 when there is none. Tables (Sites, Source, GoroutineGrowth),
// the diagnosis rules and the compiler's hot lines all charge samples
// through it, so a line is charged the same samples everywhere. class
// says whose code a Frame is, from a Classifier or another notion of the
// user's code (such as the files the compiler built).
func UserFrame[F any](fs []F, from int, class func(F) Class) int {
	for i := from + 1; i < len(fs); i++ {
		if class(fs[i]) == User {
			return i
		}
	}
	return -1
}

// sampleDuration is how long the profile covers in seconds, 0 if unknown.
func sampleDuration(p *profile.Profile) float64 {
	if p == nil {
		return 0
	}
	return float64(p.DurationNanos) / 1e9
}

// unitOf is the unit of a sample type ("nanoseconds", "bytes", "count").
func unitOf(p *profile.Profile, i int) string {
	return p.SampleType[i].Unit
}
