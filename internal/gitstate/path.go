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
	Hash    string    `json:"commit"`
	Subject string    `json:"subject"`
	Time    time.Time `json:"commit_time"` // committer date
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
// a byte no hash or date holds, and the subject comes last, so that
// nothing in it can shift the others.
const pathFormat = "--format=%H%x1f%P%x1f%cI%x1f%s"

func parsePathCommit(line string) (PathCommit, bool) {
	f := strings.SplitN(strings.TrimRight(line, "\n"), "\x1f", 4)
	if len(f) != 4 {
		return PathCommit{}, false
	}
	c := PathCommit{Hash: f[0], Subject: f[3]}
	if parents := strings.Fields(f[1]); len(parents) > 0 {
		c.Parent = parents[0]
	}
	c.Time, _ = time.Parse(time.RFC3339, f[2])
	return c, true
}

// Describe returns the commit that hash names with its subject and date.
func Describe(ctx context.Context, dir, hash string) (PathCommit, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := git(ctx, dir, "show", "-s", pathFormat, hash, "--")
	if err != nil {
		return PathCommit{}, err
	}
	c, ok := parsePathCommit(out)
	if !ok {
		return PathCommit{}, fmt.Errorf("git show %s: unexpected output %q", Short(hash), out)
	}
	return c, nil
}
