// Package gate decides whether a change to a Go module made its benchmarks
// worse: per benchmark metric, on samples of the base and the head measured
// side by side. It is opinionated about false alarms: a metric regresses
// only when benchstat's U-test stays significant after a Holm–Bonferroni
// correction over every gated metric AND its median moved by more than a
// threshold, and a gate that cannot tell says so instead of passing.
//
// Decide is a pure function of the measurements and a Config. Run is the
// measuring loop around any measuring step: it keeps adding rounds while
// the samples are too noisy to decide, so that the gate and the study of
// its error rates (bench/gate) extend runs by one rule. Measure runs that
// loop on a git repository, with internal/bench building and running the
// base and the head. LoadConfig merges .perfscope.json with the command
// line. The statistics come from x/perf's benchmath exactly as benchstat
// computes them; rendering is internal/report's.
package gate
