//go:build ignore

// Capture records the fixture of the dashboard's instruction explanations:
// a scratch module whose one benchmark calls hot and steady, each running
// the same loop 10,000 times, is benchmarked and its instructions counted
// under valgrind at two commits, the second running hot's loop 1,000 more
// times (5% more work in all, all of it in hot). Each commit's results
// file (Go benchmark format, instructions/op included) and its
// benchmark's instruction profile, as the store keeps it, are written
// here:
//
//	go run ./internal/server/testdata/instructions/capture.go
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
)

const src = `package scratch

import "testing"

var total int

//go:noinline
func hot(n int) int {
	s := 0
	for i := range n {
		s += i % 7
	}
	return s
}

//go:noinline
func steady(n int) int {
	s := 0
	for i := range n {
		s += i % 7
	}
	return s
}

func BenchmarkMix(b *testing.B) {
	for b.Loop() {
		total += hot(HOT) + steady(10000)
	}
}
`

func main() {
	if err := capture(); err != nil {
		fmt.Fprintln(os.Stderr, "capture:", err)
		os.Exit(1)
	}
}

func capture() error {
	ctx := context.Background()
	out, err := filepath.Abs(filepath.Join("internal", "server", "testdata", "instructions"))
	if err != nil {
		return err
	}
	valgrind, err := bench.FindValgrind()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "perfscope-capture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, b)
		}
		return nil
	}
	if err := git("init", "-q", "-b", "main"); err != nil {
		return err
	}
	for _, side := range []struct {
		name string
		hot  int
	}{{"base", 10000}, {"head", 11000}} {
		files := map[string]string{"go.mod": "module example.com/scratch\n\ngo 1.26\n",
			"mix_test.go": strings.Replace(src, "HOT", strconv.Itoa(side.hot), 1)}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				return err
			}
		}
		if err := git("add", "-A"); err != nil {
			return err
		}
		if err := git("commit", "-q", "-m", side.name); err != nil {
			return err
		}
		results := filepath.Join(out, side.name+".txt")
		run, err := bench.Run(ctx, bench.Options{Dir: dir, Packages: []string{"."}, Bench: ".", Count: 1, Benchtime: "20x", Output: results, Log: os.Stderr})
		if err != nil {
			return err
		}
		if err := bench.CountRun(ctx, run, dir, 1, bench.InstructionOptions{Valgrind: valgrind}, nil); err != nil {
			return err
		}
		saved, err := store.BenchRunOf(run)
		if err != nil {
			return err
		}
		if len(saved.InstructionProfiles) != 1 {
			return fmt.Errorf("%s: %d instruction profiles, want 1", side.name, len(saved.InstructionProfiles))
		}
		p := saved.InstructionProfiles[0]
		if err := os.WriteFile(filepath.Join(out, side.name+".instructions.pb.gz"), p.Data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %s %s, %d bytes of profile\n", side.name, p.Package, p.Name, len(p.Data))
	}
	return nil
}
