// Package perfscope carries the source of the example services built into
// the perfscope binary, with the expose package they import and the module's
// go.mod and go.sum. The demo unpacks it into a temporary module so that the
// compiler can explain the examples' allocations on a machine without a
// checkout.
package perfscope

import "embed"

// Source is the module's go.mod and go.sum, expose/ and examples/, at the
// paths they have in the repository.
//
//go:embed go.mod go.sum expose/*.go examples
var Source embed.FS
