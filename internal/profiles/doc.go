// Package profiles computes what a profile says: which functions are hot, which
// source lines allocate or wait, how much CPU the garbage collector and the
// allocator take, which routes cost what, and how goroutines grew. It is
// opinionated about focus: a service owner asks "which line of mine is it", so
// by default user code is ranked first and system calls, the runtime, the
// standard library and dependencies are folded into one line each, with
// pprof's full view one option away.
//
// Analyze builds everything a report shows from a Set of profiles over one
// window, read from a saved run (ReadRun) or gathered elsewhere; the pieces
// it uses are exported for other consumers (diagnosis rules, listings,
// comparisons): Functions ranks functions by flat and cum, Sites charges
// samples to source lines (allocation sites, wait sites, hot lines), GC
// measures the collector's and the allocator's share of CPU, SystemCalls
// splits the CPU in the kernel by the path that led there,
// GoroutineGrowth compares goroutine profiles, Routes splits CPU by the
// http.route label, Lines lists values per source line, and a Classifier
// tells user code from system calls, the runtime, the standard library and
// dependencies.
//
// Each computation on samples is written once, here, and every table,
// listing, diagnosis rule and compiler listing goes through it: SampleIndex
// picks the value a sample type names, SampleTotal and Share make the
// totals and shares, Frames and UserFrame charge a sample to the user's
// line, Subtract takes one profile from another, and DropProfilerSamples
// leaves the profiler's own work out, which Analyze does once for
// everything computed from a set.
//
// Everything here is a plain function on *profile.Profile values from
// github.com/google/pprof/profile; nothing prints. Values are reported in the
// profile's own units and shares are fractions of a total (0.25 is 25%).
//
// # Flat and cum
//
// A function's flat value is the sum of the samples whose innermost frame
// (inlined calls included) is that function; its cum value is the sum of the
// samples in which it appears anywhere, each sample counted once however many
// times the function recurses on that stack. This is how pprof's own graph
// package counts, so the numbers agree with `go tool pprof -top`.
package profiles
