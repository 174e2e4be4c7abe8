// Package bench runs Go benchmarks and reads their results: "go test -bench"
// for a recorded run, test binaries built from two trees and run interleaved
// for the gate, and parsing with x/perf's benchfmt.
//
// Results are always kept in the standard Go benchmark format, so every file
// perfscope writes is one benchstat reads; perfscope's own metadata rides
// along as ordinary configuration lines ("commit: ...").
package bench
