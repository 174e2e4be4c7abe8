package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A GitRepo is a git repository in a temporary directory, for tests that
// need real commits, branches and tags.
type GitRepo struct {
	t   testing.TB
	Dir string
}

// NewGitRepo makes an empty repository whose first branch is branch.
func NewGitRepo(t testing.TB, branch string) *GitRepo {
	t.Helper()
	Tool(t, "git", "install git")
	r := &GitRepo{t: t, Dir: t.TempDir()}
	r.Git("init", "-q", "-b", branch)
	return r
}

// Git runs git in the repository with a fixed identity and no user
// configuration, and returns what it printed, trimmed; a failure ends the
// test.
func (r *GitRepo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		r.t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// Commit commits everything in the work tree (or nothing) and returns the
// new commit's hash.
func (r *GitRepo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}
