// Package compare turns benchmark results into comparisons a person can act on:
// benchstat's tables, the same numbers via x/perf's benchmath.
//
// The package is opinionated in one way: it never invents statistics. Centers,
// confidence intervals and p-values come from benchmath exactly as benchstat
// computes them, so "perfscope compare" and "benchstat" agree to the digit on
// the same input.
package compare
