// Package history follows benchmark metrics from commit to commit and finds
// the commits at which they changed, for 'perfscope history' and the
// dashboard's trend pages.
//
// Comparing adjacent commits with benchstat's test alone marks far too much:
// the Mann-Whitney U test only knows the spread within one run, while two
// runs of the same code differ by more than that (another machine load, a
// different heap layout, CPU frequency). So, as the Go performance dashboard
// does, each benchmark is also judged against its own history: a commit is
// marked only when the U test says its samples differ from the previous
// commit's AND its median moved more than NoiseFactor times the benchmark's
// typical commit-to-commit movement.
//
// DetectChanges works on any sequence of per-commit samples; NewSeries and
// Load apply it to the series a store keeps, in the form the CLI and the API
// show.
package history
