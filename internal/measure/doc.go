// Package measure holds the rules of a benchmark measure, each once: which
// direction of a unit is better, whether the unit is measured exactly, the
// relative change between two values, a sample's center, whether samples
// are constant, and how a value in the unit is written. The gate, history,
// the comparisons and every page of the dashboard ask this package, so
// they cannot disagree about a unit.
//
// A unit's metadata ("Unit instructions/op assume=exact better=lower"
// lines of Go benchmark format) says what it is where an input says it;
// otherwise perfscope's own units (see Metadata) and the units the testing
// package reports are known, and the kind of quantity a tidied unit names
// (seconds, bytes, per second) decides. What none of these says stays
// unknown rather than guessed.
package measure
