// Package fetch reads pprof profiles that come from outside: uploads,
// pprof endpoints, files named on the command line. Every such profile is
// read through Parse, which bounds what one profile may cost — its
// inflated size, its counts and the memory parsing it takes — before
// parsing it, so that no input, however built, takes a reader down.
package fetch
