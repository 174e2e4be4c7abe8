package capture

import (
	"bytes"
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/run"
)

// gitState returns the commit checked out in the working directory and
// whether the worktree has changes, or "" when git or a repository is
// absent. Saved runs are excluded from the dirty check: they live in the
// worktree by default and would otherwise mark every later run dirty.
func gitState(ctx context.Context, outDir string) (commit string, dirty bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Stderr = nil
		return cmd.Output()
	}
	out, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", false
	}
	commit = strings.TrimSpace(string(out))
	spec := []string{"status", "--porcelain", "--", ":/", ":(exclude)" + strings.SplitN(run.DefaultRoot, "/", 2)[0]}
	if outDir != "" && !filepath.IsAbs(outDir) && !strings.HasPrefix(filepath.Clean(outDir), "..") {
		spec = append(spec, ":(exclude)"+filepath.ToSlash(filepath.Clean(outDir)))
	}
	out, err = git(spec...)
	if err != nil {
		// An exclude pathspec outside the worktree makes git refuse; the
		// plain check is still better than none.
		if out, err = git("status", "--porcelain"); err != nil {
			return commit, false
		}
	}
	return commit, len(bytes.TrimSpace(out)) > 0
}

// redactArgs returns a copy of a command line with credentials replaced:
// values of header arguments ("Authorization: Bearer x") whose names look
// sensitive, and passwords in URLs. Run directories get copied, committed
// and uploaded; the credentials used to make them must not travel along.
func redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redactArg(a)
	}
	return out
}

func redactArg(a string) string {
	// A flag written as --header=Name: value carries the header after "=".
	prefix, rest := "", a
	if strings.HasPrefix(a, "-") {
		if i := strings.IndexByte(a, '='); i >= 0 {
			prefix, rest = a[:i+1], a[i+1:]
		}
	}
	if name, _, ok := strings.Cut(rest, ":"); ok && !strings.ContainsAny(name, " /") && name != "" {
		lower := strings.ToLower(name)
		for _, w := range []string{"auth", "cookie", "token", "secret", "key", "password"} {
			if strings.Contains(lower, w) {
				return prefix + name + ": REDACTED"
			}
		}
	}
	if strings.Contains(rest, "://") {
		if u, err := url.Parse(rest); err == nil && u.User != nil {
			return prefix + u.Redacted()
		}
	}
	return a
}
