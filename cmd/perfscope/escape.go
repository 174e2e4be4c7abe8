package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/escape"
)

func init() { register(newEscapeCmd) }

func newEscapeCmd() *cobra.Command {
	var (
		kind, format, profilePath, sourceDir, tags string
		top                                        int
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
heaviest first, so the compiler's reasons appear next to what they cost. The
profile's paths may come from another machine or a -trimpath build: they are
matched to the source by their longest common path suffix.

A package that does not compile is reported as a warning; the others are
still shown. The exit status is 1 when nothing could be built.

Flags:
  --kind K          escape (default: escapes, moved to heap, leaking parameters),
                    inline, bounds, nilcheck, other (large copies, loop variables), all
  --profile FILE    a pprof profile (.pb.gz): show only its hot lines, weighted by
                    its default sample type (cpu time, alloc_space, ...)
  --top N           hot lines shown with --profile (default 20)
  --source-dir DIR  the source checkout to build (default: the current directory)
  --tags LIST       build tags, as go build -tags; must match the profiled binary
  --format F        text (default) or json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if !slices.Contains(groups, kind) {
				return usagef("unknown --kind %q: use one of %s", kind, strings.Join(groups, ", "))
			}
			if top < 1 {
				return usagef("--top must be at least 1")
			}
			ctx := cmd.Context()
			opts := escape.Options{}
			if tags != "" {
				opts.BuildFlags = []string{"-tags=" + tags}
			}
			// Read the profile first: a bad file should fail before a build.
			var prof *profile.Profile
			if profilePath != "" {
				var err error
				if prof, err = readProfile(profilePath); err != nil {
					return err
				}
			}
			dir, pkgs := sourceDir, args
			if len(pkgs) == 0 {
				root, mains, err := escape.DiscoverPackages(ctx, sourceDir, opts)
				if err != nil {
					return usagef("%v", err)
				}
				dir, pkgs = root, mains
			}
			ix, warns := escape.Build(ctx, dir, pkgs, opts)
			for _, w := range warns {
				fmt.Fprintln(os.Stderr, "perfscope: warning:", w)
			}
			if ix.Len() == 0 && len(warns) > 0 {
				return exitError{code: 1}
			}
			kinds := escape.Group(kind).Kinds()
			out := escapeOutput{root: dir, warnings: warns}
			if prof == nil {
				out.diags = ix.ByKind(kinds...)
			} else {
				out.profile = true
				out.sampleType, out.unit = escape.SampleUnit(prof)
				lines := escape.ProfileLines(prof, ix.Compiled)
				for _, l := range lines {
					out.total += l.Value
				}
				for _, h := range ix.Join(lines) {
					h.Diagnostics = slices.DeleteFunc(h.Diagnostics, func(d escape.Diagnostic) bool {
						return len(kinds) > 0 && !slices.Contains(kinds, d.Kind)
					})
					if len(h.Diagnostics) > 0 && len(out.hot) < top {
						out.hot = append(out.hot, h)
					}
				}
			}
			if format == "json" {
				return out.writeJSON(cmd.OutOrStdout())
			}
			return out.writeText(cmd.OutOrStdout(), kind)
		},
	}
	f := c.Flags()
	f.StringVar(&kind, "kind", "escape", "diagnostics to show: "+strings.Join(groups, ", "))
	f.StringVar(&profilePath, "profile", "", "pprof profile (.pb.gz): show only its hot lines")
	f.IntVar(&top, "top", 20, "hot lines shown with --profile")
	f.StringVar(&sourceDir, "source-dir", ".", "source checkout to build")
	f.StringVar(&tags, "tags", "", "build tags (go build -tags)")
	addFormatFlag(c, &format, formats...)
	_ = c.RegisterFlagCompletionFunc("kind", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return groups, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: not a pprof profile: %w", path, err)
	}
	return p, nil
}

// escapeOutput is what `perfscope escape` shows: all diagnostics, or with
// a profile only those on its hot lines.
type escapeOutput struct {
	root     string
	warnings []error
	diags    []escape.Diagnostic

	profile          bool
	sampleType, unit string
	total            int64
	hot              []escape.HotLine
}

func (o escapeOutput) writeJSON(w io.Writer) error {
	warnings := []string{}
	for _, e := range o.warnings {
		warnings = append(warnings, e.Error())
	}
	var v any
	if o.profile {
		hot := o.hot
		if hot == nil {
			hot = []escape.HotLine{}
		}
		v = struct {
			SampleType string           `json:"sample_type"`
			Unit       string           `json:"unit"`
			Total      int64            `json:"total"`
			HotLines   []escape.HotLine `json:"hot_lines"`
			Warnings   []string         `json:"warnings"`
		}{o.sampleType, o.unit, o.total, hot, warnings}
	} else {
		diags := o.diags
		if diags == nil {
			diags = []escape.Diagnostic{}
		}
		v = struct {
			Diagnostics []escape.Diagnostic `json:"diagnostics"`
			Warnings    []string            `json:"warnings"`
		}{diags, warnings}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Reasons quote code ("&x"); HTML escaping would garble it for readers.
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (o escapeOutput) writeText(w io.Writer, kind string) error {
	src := sourceText{}
	if !o.profile {
		if len(o.diags) == 0 {
			_, err := fmt.Fprintf(w, "no compiler diagnostics of kind %s\n", kind)
			return err
		}
		// Diagnostics come ordered by position: a new heading per line.
		var last escape.Position
		for _, d := range o.diags {
			at := escape.Position{File: d.Pos.File, Line: d.Pos.Line}
			if at != last {
				fmt.Fprintf(w, "%s:%d  %s\n", o.rel(at.File), at.Line, src.line(at))
				last = at
			}
			o.writeDiagnostic(w, d)
		}
		return nil
	}
	if len(o.hot) == 0 {
		_, err := fmt.Fprintf(w, "no hot line of the profile has compiler diagnostics of kind %s\n", kind)
		return err
	}
	fmt.Fprintf(w, "hot lines by %s with compiler diagnostics of kind %s:\n", o.sampleType, kind)
	for i, h := range o.hot {
		share := ""
		if o.total > 0 {
			share = fmt.Sprintf(" (%.1f%%)", 100*float64(h.Value)/float64(o.total))
		}
		at := escape.Position{File: h.Source, Line: h.Line}
		fmt.Fprintf(w, "%2d. %s:%d  %s%s  %s\n", i+1, o.rel(h.Source), h.Line, profileValue(h.Value, o.unit), share, src.line(at))
		for _, d := range h.Diagnostics {
			o.writeDiagnostic(w, d)
		}
	}
	return nil
}

func (o escapeOutput) writeDiagnostic(w io.Writer, d escape.Diagnostic) {
	where := ""
	if len(d.Inlined) > 0 {
		s := d.Site()
		where = fmt.Sprintf(" (inlined from %s:%d)", o.rel(s.File), s.Line)
	}
	fmt.Fprintf(w, "    %-14s %s%s\n", d.Kind, d.Reason, where)
}

// rel shows a file relative to the built directory when it is inside it.
func (o escapeOutput) rel(file string) string {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return file
	}
	if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return file
}

// sourceText reads source lines to print beside their diagnostics.
type sourceText map[string][]string

func (s sourceText) line(p escape.Position) string {
	lines, ok := s[p.File]
	if !ok {
		if b, err := os.ReadFile(p.File); err == nil {
			lines = strings.Split(string(b), "\n")
		}
		s[p.File] = lines
	}
	if p.Line < 1 || p.Line > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[p.Line-1])
}

// profileValue formats a sample value in its unit.
func profileValue(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return time.Duration(v).Round(time.Microsecond).String()
	case "bytes":
		const k = 1024
		switch {
		case v >= k*k*k:
			return fmt.Sprintf("%.1f GiB", float64(v)/(k*k*k))
		case v >= k*k:
			return fmt.Sprintf("%.1f MiB", float64(v)/(k*k))
		case v >= k:
			return fmt.Sprintf("%.1f KiB", float64(v)/k)
		}
		return fmt.Sprintf("%d B", v)
	}
	return fmt.Sprintf("%d %s", v, unit)
}
