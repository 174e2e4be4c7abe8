package main

import (
	"runtime/debug"

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
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + gitstate.Short(s.Value)
		}
	}
	return v
}
