package main

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var (
	// flagEntryRE matches a line of a flag list, cobra's ("  -c, --concurrency int   connections ...")
	// or one written by hand ("  --kind K          escape ..."): an indented flag, at most one
	// argument word, then a gap before the description.
	flagEntryRE = regexp.MustCompile(`^\s{2,}(?:-[A-Za-z], )?--([a-z0-9][a-z0-9-]*)(?: \S+)?\s{2,}\S`)
	// flagsBlockRE matches a "Flags:" heading.
	flagsBlockRE = regexp.MustCompile(`(?m)^\s*Flags:\s*$`)
)

// handListedFlags are the commands whose Long still lists their flags by
// hand. The list only shrinks: a command missing from it must not list
// flags by hand, and one on it that no longer does must leave it.
var handListedFlags []string

// TestHelpListsEachFlagOnce renders the help of perfscope and of every
// command, and fails when a flag is listed twice or Long lists flags by
// hand: cobra's flag list is the reference.
func TestHelpListsEachFlagOnce(t *testing.T) {
	root := newRootCmd()
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(all) < 15 {
		t.Fatalf("only %d commands found", len(all))
	}
	for _, c := range all {
		name := strings.TrimPrefix(c.CommandPath(), "perfscope ")
		help := helpOf(t, strings.Fields(c.CommandPath())[1:])
		seen := map[string]int{}
		for _, line := range strings.Split(help, "\n") {
			if m := flagEntryRE.FindStringSubmatch(line); m != nil {
				seen[m[1]]++
			}
		}
		var twice []string
		for f, n := range seen {
			if n > 1 {
				twice = append(twice, "--"+f)
			}
		}
		handListed := flagsBlockRE.MatchString(c.Long)
		if slices.Contains(handListedFlags, name) {
			if !handListed {
				t.Errorf("%s: its Long no longer lists flags: take it off handListedFlags", name)
			}
			continue
		}
		if handListed {
			t.Errorf("%s: its Long lists flags by hand; cobra's list is the reference (put examples in Example)", name)
		}
		if len(twice) > 0 {
			slices.Sort(twice)
			t.Errorf("%s --help lists %s twice:\n%s", c.CommandPath(), strings.Join(twice, ", "), help)
		}
		if c.Runnable() && c.HasAvailableLocalFlags() && len(seen) == 0 {
			t.Errorf("%s --help lists no flags:\n%s", c.CommandPath(), help)
		}
	}
}

// helpOf runs "perfscope ARGS --help" and returns what it prints.
func helpOf(t *testing.T, args []string) string {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(append(args, "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("perfscope %s --help: %v", strings.Join(args, " "), err)
	}
	return out.String()
}
