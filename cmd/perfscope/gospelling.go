package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Go developers spell long flags with one dash, as the flag package and
// "go test" read them: "-bench Parse", "-count=5". pflag reads a single dash
// as shorthands, so "-bench Parse" would be "-b ench" and a package named
// Parse. goFlagSpellings reads them as Go does, in the one place every
// command line goes through.

// Annotations of a command that runs "go test".
const (
	// runsGoTest marks the command: there a single-dash flag of "go test"
	// that the command does not take is refused, not read as shorthands.
	runsGoTest = "perfscope/runs-go-test"
	// goTestHint + NAME holds what to say of go test's -NAME, which the
	// command does not take (what to use instead).
	goTestHint = "perfscope/go-test-hint:"
)

// switchHint is the annotation of a switch (a boolean flag) that says what
// to do instead when it is given a value that is not a boolean, such as a
// file name.
const switchHint = "perfscope/switch-hint"

// goTestFlags are the flags of "go test" and of test binaries that people
// type to perfscope's commands that run "go test".
var goTestFlags = []string{
	"bench", "benchmem", "benchtime", "count", "cpu", "run", "skip", "short", "timeout", "tags",
	"failfast", "parallel", "shuffle", "list", "json", "race", "cover", "coverprofile", "covermode",
	"cpuprofile", "memprofile", "memprofilerate", "blockprofile", "mutexprofile", "trace", "outputdir",
	"gcflags", "ldflags", "asmflags", "mod", "exec", "vet",
}

// goFlagSpellings returns the command line args (without the program's
// name) with Go's single-dash spelling of each long flag of the command it
// runs turned into pflag's: "-name" and "-name=value" become "--name" and
// "--name=value" when name is a long flag of that command. Shorthands
// ("-c 8", "-c8", "-kq") stay as they are. A single-dash word that reads
// both as a long flag and as a cluster of that command's shorthands is
// refused, as is a single-dash flag of "go test" that a command running
// "go test" does not take, and a value that is not a boolean given to a
// switch: each is a usage error naming the right spelling. A command that
// parses its own flags, and everything after "--", are left alone.
func goFlagSpellings(root *cobra.Command, args []string) ([]string, error) {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.DisableFlagParsing {
		return args, nil
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	fs := cmd.Flags()
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		switch {
		case long && f == nil:
		case long || len(name) > 1 && f != nil:
			if !long {
				if letters := cluster(fs, name); letters != nil {
					return nil, ambiguous(cmd, name, letters)
				}
				a = "-" + a
			}
			if hasValue && isSwitch(f) {
				if _, err := strconv.ParseBool(value); err != nil {
					return nil, switchValue(cmd, f, value)
				}
			}
			if !hasValue && !isSwitch(f) && i+1 < len(args) {
				// The next word is the value, whatever it looks like.
				out = append(out, a)
				i++
				a = args[i]
			}
		case len(name) > 1 && cmd.Annotations[runsGoTest] != "" && slices.Contains(goTestFlags, name):
			return nil, notTaken(cmd, name)
		default:
			if shorthandTakesNext(fs, a[1:]) && i+1 < len(args) {
				out = append(out, a)
				i++
				a = args[i]
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// isSwitch reports whether f takes no value of its own (a boolean).
func isSwitch(f *pflag.Flag) bool { return f.NoOptDefVal != "" }

// cluster returns the shorthand flags that name reads as when every letter
// of it is a shorthand and all but the last are switches (the last may take
// the next word as its value), else nil.
func cluster(fs *pflag.FlagSet, name string) []*pflag.Flag {
	var flags []*pflag.Flag
	runes := []rune(name)
	for i, r := range runes {
		f := fs.ShorthandLookup(string(r))
		if f == nil || !isSwitch(f) && i < len(runes)-1 {
			return nil
		}
		flags = append(flags, f)
	}
	return flags
}

// shorthandTakesNext reports whether the cluster of shorthands letters
// (without its dash) ends with a flag that takes the next word as its
// value, as "-c" and "-kc" do and "-c8" and "-c=8" do not.
func shorthandTakesNext(fs *pflag.FlagSet, letters string) bool {
	runes := []rune(letters)
	for i, r := range runes {
		f := fs.ShorthandLookup(string(r))
		if f == nil {
			return false
		}
		if !isSwitch(f) {
			return i == len(runes)-1
		}
	}
	return false
}

func ambiguous(cmd *cobra.Command, name string, letters []*pflag.Flag) error {
	var short, long []string
	for _, f := range letters {
		short = append(short, "-"+f.Shorthand)
		long = append(long, "--"+f.Name)
	}
	return usagef("-%s is ambiguous in '%s': write --%s for that flag, or %s for %s", name, cmd.CommandPath(), name,
		strings.Join(short, " "), strings.Join(long, " "))
}

func switchValue(cmd *cobra.Command, f *pflag.Flag, value string) error {
	msg := fmt.Sprintf("--%s is a switch and takes no value (%q given)", f.Name, value)
	if h := f.Annotations[switchHint]; len(h) > 0 {
		msg += ": " + h[0]
	}
	return usagef("%s (see '%s --help')", msg, cmd.CommandPath())
}

func notTaken(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("-%s is go test's flag, which '%s' does not take", name, cmd.CommandPath())
	if h := cmd.Annotations[goTestHint+name]; h != "" {
		msg += ": " + h
	}
	return usagef("%s (see '%s --help')", msg, cmd.CommandPath())
}
