// Package compare holds the gate's regression decision, history's change
// detection and profile diffs, on top of benchstat's statistics (see
// internal/benchstats for the comparison tables themselves).
//
// The package is opinionated in one way: it never invents statistics.
// P-values come from benchmath exactly as benchstat computes them; the gate
// adds only an effect-size threshold and a Holm–Bonferroni correction on top
// of those p-values.
package compare
