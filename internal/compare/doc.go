// Package compare turns benchmark results into comparisons a person can act on:
// benchstat's tables, the same numbers via x/perf's benchmath, and the gate's
// regression decision.
//
// The package is opinionated in one way: it never invents statistics. Centers,
// confidence intervals and p-values come from benchmath exactly as benchstat
// computes them, so "perfscope compare" and "benchstat" agree to the digit on
// the same input; the gate adds only an effect-size threshold and a
// Holm–Bonferroni correction on top of those p-values.
package compare
