// Package findings diagnoses a profiled run: each rule looks at the
// analysis of a run (its tables and raw profiles) and, when it recognises
// a known performance problem, says what it is, how much it costs, where
// (function, file:line, the numbers, the compiler's reason when the
// escape index knows it) and what fix usually works, with a short example.
//
// The package is opinionated about precision: a rule fires only on a
// measured share of CPU, allocations, wait time or goroutines above a
// threshold written down in its code and its explanation, and only at
// lines of the user's own code, so a fixed program stays quiet. Numbers
// come from the profiles alone; compiler reasons and source text are added
// when the source can be found, and the findings say so when it cannot.
//
// A finding's sentences (its summary, an evidence's detail, a rule's
// explanation) are Texts: words with their numbers kept as values, which
// the rendering layer (internal/report) writes in every format, as it
// writes every other number.
//
// # JSON
//
// A report's "findings" array holds findings, ranked by severity, written
// by internal/report with their Texts as strings. Field names are stable:
//
//	rule       rule id, e.g. "concat-loop" (see Rules)
//	title      one line naming the problem
//	severity   the share of Resource the problem accounts for, in [0,1]
//	resource   cpu, alloc_objects, alloc_bytes, block_delay, mutex_delay,
//	           goroutines or idle
//	summary    one or two sentences with the numbers
//	evidence   where: function, file, line, call, source, measures,
//	           compiler, stack, detail
//	fix        summary and example
//	notes      caveats, such as missing compiler reasons
package findings
