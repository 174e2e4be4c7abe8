package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newEscapeCmd) }

func newEscapeCmd() *cobra.Command {
	var (
		opts         escape.ListOptions
		kind, format string
		tags         string
	)
	formats := []string{"text", "json"}
	var groups []string
	for _, g := range escape.Groups() {
		groups = append(groups, string(g))
	}
	c := &cobra.Command{
		Use:   "escape [packages]",
		Short: "Show which lines allocate and why the compiler moved them to the heap",
		Long: `escape builds the packages with the compiler's optimization log
(go build -gcflags=-json, the same facts as -gcflags=-m) and prints its
diagnostics grouped by file:line, each with a plain-language reason:

  main.go:15  s = string(c) + s
      escape   ` + "`string(c) + s`" + ` escapes to heap: stored in ` + "`s`" + `, then returned from the function

Without packages, the commands (main packages) of the module in --source-dir
are built; every package of the module they import is reported too. Only the
module's own packages are compiled again: the rest of the build cache is used.

With --profile, only lines where the profile spent time or memory are shown,
heaviest first, weighted by the profile's default sample type (cpu time,
alloc_space, ...), so the compiler's reasons appear next to what they cost.
The profile's paths may come from another machine or a -trimpath build: they
are matched to the source by their longest common path suffix.

A package that does not compile is reported as a warning; the others are
still shown. The exit status is 1 when nothing could be built.`,
		Example: `  perfscope escape ./cmd/server
  perfscope escape --kind all ./internal/parse
  perfscope escape --profile .perfscope/runs/RUN/allocs.pb.gz --top 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if !slices.Contains(groups, kind) {
				return usagef("unknown --kind %q: use one of %s", kind, strings.Join(groups, ", "))
			}
			if opts.Top < 1 {
				return usagef("--top must be at least 1")
			}
			opts.Group, opts.Packages = escape.Group(kind), args
			if tags != "" {
				opts.BuildFlags = []string{"-tags=" + tags}
			}
			l, err := escape.List(cmd.Context(), opts)
			if errors.Is(err, escape.ErrNoPackages) {
				return usageError{err}
			} else if err != nil {
				return err
			}
			for _, w := range l.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "perfscope: warning:", w)
			}
			if l.NothingBuilt {
				return exitError{code: 1}
			}
			return report.WriteEscape(cmd.OutOrStdout(), report.Format(format), l)
		},
	}
	f := c.Flags()
	f.StringVar(&kind, "kind", "escape", "diagnostics to show: escape (escapes, moved to heap, leaking parameters), inline, bounds,\n"+
		"nilcheck, other (large copies, loop variables), all")
	f.StringVar(&opts.ProfilePath, "profile", "", "pprof profile (.pb.gz): show only its hot lines, weighted by its default sample type")
	f.IntVar(&opts.Top, "top", 20, "hot lines shown with --profile")
	f.StringVar(&opts.Dir, "source-dir", ".", "source checkout to build")
	f.StringVar(&tags, "tags", "", "build tags, as go build -tags; must match the profiled binary")
	addFormatFlag(c, &format, formats...)
	_ = c.RegisterFlagCompletionFunc("kind", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return groups, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}
