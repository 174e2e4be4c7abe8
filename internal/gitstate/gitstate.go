// Package gitstate tells which commit a work tree holds and whether it has
// changes, once for every result perfscope records. Results are filed under
// their commit, so every command must agree on what "dirty" means: any
// change git would see, untracked files included (they can change what
// gets built), except perfscope's own results (.perfscope/ anywhere, and
// any extra directories the caller names), which must not make the next
// measurement dirty.
package gitstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ResultsDir is the directory, at any depth of a work tree, where perfscope
// keeps what it measured. It never counts as a change.
const ResultsDir = ".perfscope"

// A State is the git state of a work tree.
type State struct {
	// Commit is the full hash of HEAD.
	Commit string
	// CommitTime is when HEAD was committed (the committer date).
	CommitTime time.Time
	// Branch is the checked-out branch, "" on a detached HEAD.
	Branch string
	// Dirty is set when the work tree differs from HEAD.
	Dirty bool
	// Subject and Author are HEAD's, as Describe returns them.
	Subject, Author string
}

// Limits on what is kept of a commit's subject and author: a message is
// free text, and the subject is for one line of a page.
const (
	MaxSubject = 200
	MaxAuthor  = 100
)

// ErrNoRepository is returned when dir is not inside a git work tree or git
// is not installed.
var ErrNoRepository = errors.New("not a git work tree (or git is not installed)")

// Read returns the git state of the work tree holding dir. exclude names
// further directories, relative to dir, whose changes do not count (a
// results directory given on the command line); ones outside the work tree
// are ignored.
func Read(ctx context.Context, dir string, exclude ...string) (State, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := git(ctx, dir, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return State{}, fmt.Errorf("%w: %v", ErrNoRepository, err)
	}
	s := State{Commit: strings.TrimSpace(out)}
	if c, err := Describe(ctx, dir, "HEAD"); err == nil {
		s.CommitTime, s.Subject, s.Author = c.Time, c.Subject, c.Author
	}
	if b, err := git(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD"); err == nil {
		s.Branch = strings.TrimSpace(b)
	}
	s.Dirty, err = dirty(ctx, dir, exclude)
	return s, err
}

// CommitTime returns the committer date of rev (a hash, branch or tag) in
// the repository holding dir; an error when git does not know rev.
func CommitTime(ctx context.Context, dir, rev string) (time.Time, error) {
	if rev == "" {
		return time.Time{}, errors.New("commit time: no revision named")
	}
	c, err := Describe(ctx, dir, rev)
	if err == nil && c.Time.IsZero() {
		err = fmt.Errorf("commit time of %s: git gave none", rev)
	}
	return c.Time, err
}

// describeLimit bounds what Describe reads of git's answer: a date, an
// author and a subject at their limits fit with room to spare.
const describeLimit = 4 << 10

// OneLine makes s one line of valid UTF-8 of at most limit bytes, ending in
// "…" where it was cut: control characters become spaces, runs of spaces
// one space. Commit subjects and authors from git or from an upload are
// kept this way.
func OneLine(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// Dirty reports whether the work tree holding dir has changes, by the
// package's one definition.
func Dirty(ctx context.Context, dir string, exclude ...string) (bool, error) {
	return dirty(ctx, dir, exclude)
}

func dirty(ctx context.Context, dir string, exclude []string) (bool, error) {
	spec := []string{"status", "--porcelain", "--untracked-files=normal", "--", ":(top)",
		":(top,exclude,glob)**/" + ResultsDir + "/**"}
	for _, e := range exclude {
		if e == "" || filepath.IsAbs(e) || strings.HasPrefix(filepath.Clean(e), "..") {
			continue
		}
		spec = append(spec, ":(exclude)"+filepath.ToSlash(filepath.Clean(e)))
	}
	out, err := git(ctx, dir, spec...)
	if err != nil {
		return false, fmt.Errorf("git status: %w", err)
	}
	return strings.TrimSpace(out) != "", nil
}

// Short shortens a commit hash for people to read: 12 characters, as
// many as stay unique in large repositories. Anything that is not longer
// is returned as it is.
func Short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// DirtySuffix ends the reference of results measured on a modified work
// tree of a commit ("3f2a…+dirty"): they measure code no commit holds, so
// they are kept, listed and compared apart from the commit's own.
const DirtySuffix = "+dirty"

// ShortRef shortens a commit reference as Short does, keeping its
// DirtySuffix.
func ShortRef(ref string) string {
	hash, dirty := strings.CutSuffix(ref, DirtySuffix)
	if dirty {
		return Short(hash) + DirtySuffix
	}
	return Short(hash)
}

// git runs git in dir and returns its standard output; a failure is a
// *gitError carrying the first line of what git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitBounded(ctx, dir, 0, args...)
}

// gitBounded is git keeping at most limit bytes of the standard output
// (all of it when limit is 0); the rest is read and dropped, so git is not
// blocked on a full pipe.
func gitBounded(ctx context.Context, dir string, limit int, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	stderr := &boundedBuffer{limit: 4 << 10}
	stdout := &boundedBuffer{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return "", &gitError{sub: args[0], msg: firstMessage(stderr.String()), err: err}
	}
	return stdout.String(), nil
}

// A boundedBuffer keeps the first limit bytes written to it (all when
// limit is 0) and drops the rest.
type boundedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if b.limit > 0 {
		p = p[:min(len(p), max(b.limit-b.Len(), 0))]
	}
	b.Buffer.Write(p)
	return n, nil
}

// A gitError is a git command that failed: msg is the first line git
// wrote, without its "fatal: " or "error: " prefix.
type gitError struct {
	sub, msg string
	err      error
}

func (e *gitError) Error() string {
	if e.msg != "" {
		return fmt.Sprintf("git %s: %s: %v", e.sub, e.msg, e.err)
	}
	return fmt.Sprintf("git %s: %v", e.sub, e.err)
}

func (e *gitError) Unwrap() error { return e.err }

// firstMessage returns the first line of git's standard error that is not
// a hint, without its severity.
func firstMessage(stderr string) string {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "hint:") {
			continue
		}
		for _, p := range []string{"fatal: ", "error: "} {
			line = strings.TrimPrefix(line, p)
		}
		return line
	}
	return ""
}
