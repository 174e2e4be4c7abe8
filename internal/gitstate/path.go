package gitstate

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// A PathCommit is one commit of a line of history, as a person names it.
type PathCommit struct {
	Hash    string `json:"commit"`
	Subject string `json:"subject"`
	// Author is the author's name.
	Author string    `json:"author,omitempty"`
	Time   time.Time `json:"commit_time"` // committer date
	// Parent is its first parent, "" for a root commit.
	Parent string `json:"parent,omitempty"`
}

// IsAncestor reports whether commit a is an ancestor of commit b (or b
// itself) in the repository holding dir.
func IsAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := git(ctx, dir, "merge-base", "--is-ancestor", a, b)
	var ge *gitError
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && errors.As(ge.err, &ee) && ee.ExitCode() == 1:
		return false, nil
	}
	return false, err
}

// FirstParentPath returns the commits git bisect would walk from good to
// bad along bad's first parents: "git rev-list --first-parent good..bad",
// oldest first, so the last is bad. good and bad are full hashes.
func FirstParentPath(ctx context.Context, dir, good, bad string) ([]PathCommit, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := git(ctx, dir, "log", "--first-parent", "--reverse", pathFormat, good+".."+bad, "--")
	if err != nil {
		return nil, fmt.Errorf("commits from %s to %s: %w", Short(good), Short(bad), err)
	}
	var path []PathCommit
	for line := range strings.Lines(out) {
		if c, ok := parsePathCommit(line); ok {
			path = append(path, c)
		}
	}
	return path, nil
}

// pathFormat is the format of a PathCommit line; fields are separated by
// a byte no hash, date or name holds, and the subject comes last, so that
// nothing in it can shift the others and a bounded read cuts only it.
const pathFormat = "--format=%H%x1f%P%x1f%cI%x1f%an%x1f%s"

// parsePathCommit reads one line of pathFormat. The subject and author
// are kept as OneLine makes them.
func parsePathCommit(line string) (PathCommit, bool) {
	f := strings.SplitN(strings.TrimRight(line, "\n"), "\x1f", 5)
	if len(f) != 5 {
		return PathCommit{}, false
	}
	c := PathCommit{Hash: f[0], Author: OneLine(f[3], MaxAuthor), Subject: OneLine(f[4], MaxSubject)}
	if parents := strings.Fields(f[1]); len(parents) > 0 {
		c.Parent = parents[0]
	}
	c.Time, _ = time.Parse(time.RFC3339, f[2])
	return c, true
}

// Describe returns the commit that rev (a hash, branch or tag) names, with
// its subject, author and date; an error when git does not know rev.
// What git prints is read up to a bound, whatever the message holds.
func Describe(ctx context.Context, dir, rev string) (PathCommit, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := gitBounded(ctx, dir, describeLimit, "show", "-s", pathFormat, rev, "--")
	if err != nil {
		return PathCommit{}, err
	}
	c, ok := parsePathCommit(out)
	if !ok {
		return PathCommit{}, fmt.Errorf("git show %s: unexpected output %q", Short(rev), out)
	}
	return c, nil
}
