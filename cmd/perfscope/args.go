package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argsHint is the annotation of a command that says what its arguments
// are, with an example, for the line a command given none prints: "the
// URL to load, e.g. perfscope load -d 10s 'http://127.0.0.1:8080/'". A
// command without it is described by its Use line and first Example.
const argsHint = "perfscope/args-hint"

// checkArgs makes every command's argument check below c answer a wrong
// number of arguments with one usage line (exit status 2) that names the
// command and says what to give, instead of cobra's "accepts 1 arg(s),
// received 0".
func checkArgs(c *cobra.Command) {
	if !c.Runnable() && c.HasSubCommands() {
		// cobra shows the help of a group of commands, exit status 0,
		// whatever follows it: "perfscope token lsit" would succeed.
		c.Args = cobra.NoArgs
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if check(cmd, args) != nil {
				return argsError(cmd, args)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		checkArgs(sub)
	}
}

// argsError is the usage error of cmd given args it does not take: none
// where it needs some, more than it takes, or a command its group does not
// have.
func argsError(cmd *cobra.Command, args []string) error {
	path := cmd.CommandPath()
	usagef := func(format string, a ...any) error {
		return commandError{usageError{fmt.Errorf(path+format, a...)}}
	}
	if cmd.HasSubCommands() {
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return usagef(": unknown command %q: use %s (see '%s --help')", args[0], strings.Join(names, ", "), path)
	}
	want := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(cmd.Use, cmd.Name()), "[flags]"))
	if len(args) == 0 {
		if hint := cmd.Annotations[argsHint]; hint != "" {
			return usagef(": give %s", hint)
		}
		if ex := exampleOf(cmd); ex != "" {
			return usagef(": give %s, e.g. %s", want, ex)
		}
		return usagef(": give %s (see '%s --help')", want, path)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	if want == "" {
		return usagef(" takes no arguments, not %s (see '%s --help')", strings.Join(quoted, " "), path)
	}
	return usagef(" is used as '%s %s', not with %s (see '%s --help')", path, want, strings.Join(quoted, " "), path)
}

// exampleOf returns the first line of cmd's examples that runs cmd,
// without its comment.
func exampleOf(cmd *cobra.Command) string {
	for _, line := range strings.Split(cmd.Example, "\n") {
		line, _, _ = strings.Cut(strings.TrimSpace(line), " #")
		if line = strings.TrimSpace(line); strings.HasPrefix(line, cmd.CommandPath()+" ") {
			return line
		}
	}
	return ""
}

// A commandError's message names the command it is about, so it is shown
// as it is, without execute's "perfscope: ".
type commandError struct{ err error }

func (e commandError) Error() string { return e.err.Error() }
func (e commandError) Unwrap() error { return e.err }

// errorLine is the line execute prints for err.
func errorLine(err error) string {
	if errors.As(err, new(commandError)) {
		return err.Error()
	}
	return "perfscope: " + err.Error()
}
