// Package history follows benchmark metrics from commit to commit and finds
// the commits at which they changed. It is the only place that decides what
// changed: 'perfscope history', the dashboard's home page, benchmark list,
// trend pages and series API all call Changes and show its answer.
//
// A series is one metric on one branch and one machine: results of another
// machine are not comparable, and the commit before one on a branch is not
// the one before it on another, so neither is ever "previous".
//
// Comparing adjacent commits with benchstat's test alone marks far too much:
// the Mann-Whitney U test only knows the spread within one run, while two
// runs of the same code differ by more than that (another machine load, a
// different heap layout, CPU frequency). So, as the Go performance dashboard
// does, a noisy measure is also judged against its own history: a commit is
// marked only when the U test says its samples differ from the previous
// commit's AND its median moved more than NoiseFactor times the benchmark's
// typical commit-to-commit movement, estimated with the steps left out.
// Measures that do not vary need no history: an exact one (instructions/op)
// is marked when it moves beyond its threshold, an allocation count when its
// samples stop overlapping, from the second commit on.
//
// DetectChanges works on any sequence of per-commit samples; NewSeries and
// Changes apply it to the series a store keeps, in the form the CLI and the
// API show.
package history
