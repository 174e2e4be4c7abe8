// Package benchstats summarizes and compares Go benchmark results with
// benchstat's statistics: the same tables, medians, confidence intervals,
// U-test p-values, deltas and geomeans, computed with x/perf's benchmath.
//
// The package is opinionated in one way: it never invents statistics, so
// "perfscope compare" and "benchstat" agree to the digit on the same input.
// It only computes; internal/report renders what it returns. Inputs are
// streamed: each result is reduced to its values in its cell as it is
// read, so memory grows with the number of cells, not of lines.
package benchstats
