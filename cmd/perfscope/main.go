// Command perfscope loads Go services, captures their profiles, diagnoses what
// is slow, benchmarks, compares with real statistics, gates CI and keeps history.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."; a plain
// build reports the module version recorded by the Go toolchain, if any.
var version = ""

// commands holds the constructors of every subcommand; each command's file
// registers itself from init so this file never has to change.
var commands []func() *cobra.Command

func register(newCmd func() *cobra.Command) { commands = append(commands, newCmd) }

// usageError marks bad input from the command line: it exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error (exit status 2).
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "perfscope",
		Short: "Load, profile, diagnose, benchmark, compare and track Go services",
		Long: `perfscope is one tool for the whole performance loop of Go services:
load a service, capture its profiles, diagnose what is slow and why, benchmark,
compare with real statistics, gate CI on regressions and keep every result.

Every saved profile is a standard .pb.gz that 'go tool pprof' opens; every
benchmark file is standard Go benchmark format that 'benchstat' reads.`,
		Version:       perfscopeVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	for _, newCmd := range commands {
		root.AddCommand(newCmd())
	}
	checkArgs(root)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:]))
}

// execute runs the command line and maps errors to exit codes:
// 0 success, 1 failure, 2 usage error.
func execute(ctx context.Context, args []string) int {
	err := runLine(ctx, newRootCmd(), args)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "perfscope: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, errorLine(err))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return 2
	}
	return 1
}

// runLine runs the command line args (without the program's name) on
// root, Go's single-dash spellings of long flags read as Go reads them (see
// goFlagSpellings).
func runLine(ctx context.Context, root *cobra.Command, args []string) error {
	args, err := goFlagSpellings(root, args)
	if err != nil {
		return err
	}
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// exitError carries a specific exit status (for example the gate's 1 and 2)
// with an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// isCobraUsageError recognises cobra's own argument errors (unknown command,
// wrong number of arguments), which it returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "requires exactly", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
