// Package cputime reads the CPU time the current process has used. On a
// machine shared with other work, wall time mostly measures the neighbours;
// CPU time is what the code itself costs.
package cputime

import "time"

// Process returns the user plus system CPU time the current process has
// used since it started.
func Process() (time.Duration, error) { return process() }
