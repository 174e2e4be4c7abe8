package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
)

// Meta describes where and on what a benchmark run happened: enough to
// record the run in history and to tell whether two runs are comparable.
type Meta struct {
	// Commit is the full hash of HEAD, empty outside a git work tree.
	Commit string `json:"commit,omitempty"`
	// Branch is the current branch, empty when detached.
	Branch string `json:"branch,omitempty"`
	// CommitTime is the commit's committer date; zero outside git.
	// History orders commits by it.
	CommitTime time.Time `json:"commit_time,omitzero"`
	// Subject is the first line of the commit's message and Author its
	// author's name; empty outside git.
	Subject string `json:"subject,omitempty"`
	Author  string `json:"author,omitempty"`
	// Dirty reports uncommitted changes to tracked or untracked files,
	// so the results are not exactly those of Commit.
	Dirty bool `json:"dirty"`
	// GoVersion is the toolchain that built the benchmarks ("go1.26.8").
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	// CPU is the processor model, as "go test" reports it.
	CPU string `json:"cpu,omitempty"`
	// Machine is the host name.
	Machine string `json:"machine,omitempty"`
	// Time is when the run started.
	Time time.Time `json:"time"`
}

// ConfigLines returns the metadata as Go benchmark configuration lines.
// Only the keys that describe the code and toolchain are written
// (commit, branch, dirty, go); host and time stay out of the file so that
// benchstat's default grouping is not split by them. The cpu line is
// left to "go test", which prints it in its own words; a second,
// differently worded cpu line would split tables.
func (m Meta) ConfigLines() []string {
	var lines []string
	add := func(k, v string) {
		if v != "" {
			// A newline would end the line early and a later
			// "key: value" would be forged; keep values on one line.
			lines = append(lines, k+": "+strings.Join(strings.Fields(v), " "))
		}
	}
	add("commit", m.Commit)
	add("branch", m.Branch)
	if m.Commit != "" {
		add("dirty", fmt.Sprint(m.Dirty))
	}
	add("go", m.GoVersion)
	return lines
}

// Environment collects the metadata of the code in dir and this machine.
// Missing git is not an error: the git fields stay empty.
func Environment(ctx context.Context, dir string) (Meta, error) {
	m := Meta{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Time: time.Now()}
	gov, err := output(ctx, dir, "go", "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return m, fmt.Errorf("find go version: %w", err)
	}
	if f := strings.Split(strings.TrimSpace(gov), "\n"); len(f) == 3 {
		m.GoVersion, m.GOOS, m.GOARCH = f[0], f[1], f[2]
	}
	m.Machine, _ = os.Hostname()
	m.CPU = cpuModel()
	if git, err := gitstate.Read(ctx, dir); err == nil {
		m.Commit, m.CommitTime, m.Branch, m.Dirty = git.Commit, git.CommitTime, git.Branch, git.Dirty
		m.Subject, m.Author = git.Subject, git.Author
	}
	return m, nil
}

// cpuModel reads the processor model the way the testing package does,
// for platforms where "go test" prints no cpu line.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// output runs a command in dir and returns its stdout; a failure carries
// the command's stderr, which is what names the problem.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := command(ctx, dir, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return string(out), fmt.Errorf("%s %s: %s: %w", name, strings.Join(args, " "), firstLines(msg, 5), err)
		}
		return string(out), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
