package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnknownRef means a git reference names no commit.
var ErrUnknownRef = errors.New("unknown git reference")

// ErrNotGit means the directory is not inside a git work tree.
var ErrNotGit = errors.New("not inside a git work tree")

// RepoRoot returns the top directory of the git work tree holding dir.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	out, err := output(ctx, dir, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	return strings.TrimSpace(out), nil
}

// ResolveRef returns the commit hash that ref names in the repository at
// dir, or an error wrapping ErrUnknownRef.
func ResolveRef(ctx context.Context, dir, ref string) (string, error) {
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("%q: %w", ref, ErrUnknownRef)
	}
	out, err := output(ctx, dir, "git", "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q: %w", ref, ErrUnknownRef)
	}
	return strings.TrimSpace(out), nil
}

// A Worktree is a temporary checkout of a commit beside the user's work
// tree, so the base can be built without touching the user's files.
type Worktree struct {
	Dir    string
	repo   string
	parent string
}

// AddWorktree checks out commit into a new temporary git worktree of the
// repository at repo. Remove must be called to delete it.
func AddWorktree(ctx context.Context, repo, commit string) (*Worktree, error) {
	parent, err := os.MkdirTemp("", "perfscope-base-")
	if err != nil {
		return nil, fmt.Errorf("create worktree directory: %w", err)
	}
	dir := filepath.Join(parent, "base")
	if _, err := output(ctx, repo, "git", "worktree", "add", "--detach", "--quiet", dir, commit); err != nil {
		os.RemoveAll(parent)
		return nil, fmt.Errorf("check out base: %w", err)
	}
	return &Worktree{Dir: dir, repo: repo, parent: parent}, nil
}

// Remove deletes the worktree and its registration in the repository. It
// uses a fresh context so that an interrupted gate still cleans up.
func (w *Worktree) Remove() error {
	_, err := output(context.Background(), w.repo, "git", "worktree", "remove", "--force", w.Dir)
	os.RemoveAll(w.parent)
	if err != nil {
		// The directory is gone; let git forget it too.
		output(context.Background(), w.repo, "git", "worktree", "prune")
		return fmt.Errorf("remove worktree: %w", err)
	}
	return nil
}
