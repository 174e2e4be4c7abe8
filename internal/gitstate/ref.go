package gitstate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// A RefError is git's refusal of a reference. Reason is what git said, as a
// phrase that fits in parentheses ("no branch, tag or commit by that name",
// "not a git repository ...").
type RefError struct {
	Ref, Reason string
}

func (e *RefError) Error() string { return e.Ref + ": " + e.Reason }

// ResolveCommit returns the full hash of the commit that ref names in the
// repository holding dir, read as git reads it: a branch, a tag, HEAD,
// HEAD~2, a hash or a unique prefix of one. A reference git cannot read as a
// commit is a *RefError.
func ResolveCommit(ctx context.Context, dir, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		// git would read it as an option.
		return "", &RefError{ref, "not a reference"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := git(ctx, dir, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", &RefError{ref, refusal(err)}
	}
	return strings.TrimSpace(out), nil
}

// refusal words git's failure to read a reference for a person. For a name
// it does not know, git only says "Needed a single revision".
func refusal(err error) string {
	var ge *gitError
	if !errors.As(err, &ge) {
		return err.Error()
	}
	var ee *exec.Error
	switch {
	case errors.As(ge.err, &ee):
		return "git is not installed"
	case ge.msg == "" || ge.msg == "Needed a single revision":
		return "no branch, tag or commit by that name"
	}
	return ge.msg
}

// A Neighbour is a commit near another in the history.
type Neighbour struct {
	Commit string
	// Distance is how many commits lie between the two, the far one
	// included: 1 for a parent or a child.
	Distance int
}

// Nearest finds, among candidates (full hashes), the nearest ancestor and
// the nearest descendant of commit in the repository holding dir, by the
// shortest path through the history; either is nil when no candidate is
// one. Descendants are looked for among the commits the repository's refs
// reach.
func Nearest(ctx context.Context, dir, commit string, candidates []string) (before, after *Neighbour, err error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	want := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		if c != commit {
			want[c] = true
		}
	}
	if len(want) == 0 {
		return nil, nil, nil
	}
	// Children are listed before their parents: a commit's distance is
	// final when it is listed.
	dist := map[string]int{commit: 0}
	err = revList(ctx, dir, func(c string, parents []string) {
		d, ok := dist[c]
		if !ok {
			return
		}
		if want[c] {
			before = nearer(before, c, d)
		}
		for _, p := range parents {
			if pd, ok := dist[p]; !ok || d+1 < pd {
				dist[p] = d + 1
			}
		}
	}, "--topo-order", commit)
	if err != nil {
		return nil, nil, err
	}
	// Parents are listed before their children, and only commits that
	// descend from commit.
	dist = map[string]int{commit: 0}
	err = revList(ctx, dir, func(c string, parents []string) {
		d := -1
		for _, p := range parents {
			if pd, ok := dist[p]; ok && (d < 0 || pd+1 < d) {
				d = pd + 1
			}
		}
		if d < 0 {
			return
		}
		dist[c] = d
		if want[c] {
			after = nearer(after, c, d)
		}
	}, "--topo-order", "--reverse", "--ancestry-path", "--all", "^"+commit)
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// nearer returns n or the commit c at distance d, whichever is nearer.
func nearer(n *Neighbour, c string, d int) *Neighbour {
	if n == nil || d < n.Distance {
		return &Neighbour{c, d}
	}
	return n
}

// revList calls each with every commit "git rev-list --parents ARGS"
// lists and the commit's parents.
func revList(ctx context.Context, dir string, each func(commit string, parents []string), args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"rev-list", "--parents"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git rev-list: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git rev-list: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			each(f[0], f[1:])
		}
	}
	if err := cmd.Wait(); err != nil {
		return &gitError{sub: "rev-list", msg: firstMessage(stderr.String()), err: err}
	}
	return nil
}
