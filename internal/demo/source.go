package demo

import (
	"fmt"
	"os"

	"github.com/perfscope/perfscope"
)

// Command is the command line that starts an example with the perfscope
// executable exe: its "example" command, which takes the example's name and
// flags.
func Command(exe string) []string { return []string{exe, "example"} }

// UnpackSource writes the embedded source of the examples, with the expose
// package and the module's go.mod and go.sum, into dir, which must not exist
// yet. The result is a module the go command builds like a checkout: it
// needs the module's dependencies from the module cache, where building
// perfscope put them, or from the module proxy.
func UnpackSource(dir string) error {
	if err := os.CopyFS(dir, perfscope.Source); err != nil {
		return fmt.Errorf("unpack the examples' source into %s: %w", dir, err)
	}
	return nil
}
