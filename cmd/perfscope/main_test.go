package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs the tests with a home directory of their own, so no test
// reads or writes the user's ~/.perfscope (the default store): a command
// run without --db finds an empty home. The go command's caches and
// settings, which live under the home directory by default, are pinned
// first to where they are, so builds stay cached.
func TestMain(m *testing.M) {
	os.Exit(runIsolated(m))
}

func runIsolated(m *testing.M) int {
	vars := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}
	out, err := exec.Command("go", append([]string{"env"}, vars...)...).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		return 1
	}
	for i, v := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if i < len(vars) && os.Getenv(vars[i]) == "" {
			os.Setenv(vars[i], v)
		}
	}
	home, err := os.MkdirTemp("", "perfscope-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(home)
	for _, v := range []string{"HOME", "USERPROFILE", "home"} {
		os.Setenv(v, home)
	}
	return m.Run()
}
