package capture

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultRoot is the directory, relative to the working directory, under
// which runs are saved when Options.OutDir is empty.
const DefaultRoot = ".perfscope/runs"

// newRunID names a run by its UTC start time, so directory listings sort
// by time, plus a short random suffix so runs started in the same second
// by different processes do not collide.
func newRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

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
	spec := []string{"status", "--porcelain", "--", ":/", ":(exclude)" + strings.SplitN(DefaultRoot, "/", 2)[0]}
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

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a half-written file and a
// crash leaves the previous version intact.
func writeFileAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes owner-only files; saved runs are ordinary files.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
