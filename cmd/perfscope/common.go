package main

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// addFormatFlag adds the --format flag shared by every command that renders
// output; the first allowed value is the default. checkFormat validates it.
func addFormatFlag(c *cobra.Command, p *string, allowed ...string) {
	c.Flags().StringVar(p, "format", allowed[0], "output format: "+strings.Join(allowed, ", "))
	_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}

// checkFormat returns a usage error when format is not one of allowed.
func checkFormat(format string, allowed ...string) error {
	if slices.Contains(allowed, format) {
		return nil
	}
	return usagef("unknown --format %q: use one of %s", format, strings.Join(allowed, ", "))
}

// stderrIsTerminal reports whether progress output would reach a person.
func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }
