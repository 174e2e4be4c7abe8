package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/gitstate"
)

// perfscopeVersion reports the build's version: the -ldflags value when set,
// else the module version and VCS revision recorded by the Go toolchain.
func perfscopeVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	// A pseudo-version (v0.0.0-date-revision) names the revision already.
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && v == "devel" {
			v += "+" + gitstate.Short(s.Value)
		}
	}
	return v
}

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print perfscope's version, the commit it was built from and the Go version",
		Long: `version prints the module version (a tag for 'go install ...@version', devel
for a build from a checkout), the VCS revision the binary was built from
(marked modified when the checkout had uncommitted changes) and the Go
version and platform it was built with, as the Go toolchain recorded them.
A build that recorded no revision (-buildvcs=false, go run, no git checkout)
says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "perfscope %s\n", perfscopeVersion())
			info, ok := debug.ReadBuildInfo()
			if !ok {
				fmt.Fprintf(w, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			fmt.Fprintf(w, "module    %s %s\n", info.Main.Path, info.Main.Version)
			if rev := revision(info.Main.Version, settings); rev != "" {
				fmt.Fprintf(w, "revision  %s\n", rev)
			}
			fmt.Fprintf(w, "go        %s %s/%s\n", info.GoVersion, settings["GOOS"], settings["GOARCH"])
			return nil
		},
	}
}

// revision says which commit the build recorded (settings are the build
// info's), or why it recorded none. It is "" for a build of a released
// version, which names the code by itself.
func revision(mainVersion string, settings map[string]string) string {
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			rev += ", committed " + t
		}
		return rev
	}
	if mainVersion != "" && mainVersion != "(devel)" {
		return ""
	}
	// The build info does not say why: -buildvcs=false leaves no trace.
	return "unknown: the build recorded none (built with -buildvcs=false, which GOFLAGS often sets: see 'go env GOFLAGS'; or with go run, or outside a git checkout)"
}
