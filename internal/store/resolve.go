package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/gitstate"
)

// A CommitResolver resolves compare's references to recorded commits into
// their stored samples. A reference is a recorded commit's hash or unique
// prefix of at least 4 characters, else anything git reads as a commit in
// the repository holding Dir (a branch, a tag, HEAD~2, a short hash) whose
// results are stored; "+dirty" appended names the runs made on a modified
// work tree of that commit.
type CommitResolver struct {
	// DB is the store to open, as Open takes it; the store is opened only
	// when a reference is not a file, so comparing files needs no database.
	DB     string
	Filter Filter
	// Dir is a directory of the git repository that references are read
	// in; "" is the current directory.
	Dir string
}

// Resolve implements benchstats.Resolver. It reads what neither the store
// nor git can, so it comes last in a chain of resolvers: a reference it
// cannot resolve is not benchstats.ErrNotFound but an error wrapping
// ErrUnknownCommit, whose message is one line naming the reference and
// what to do.
func (r CommitResolver) Resolve(ctx context.Context, ref string) (*benchstats.Input, error) {
	s, err := OpenReadOnly(ctx, r.DB)
	if err != nil && !errors.Is(err, ErrNoDatabase) {
		return nil, err
	}
	if s != nil {
		defer s.Close()
		cs, err := s.CommitSamples(ctx, ref, r.Filter)
		if err == nil {
			return commitInput(cs), nil
		}
		if !errors.Is(err, ErrUnknownCommit) {
			return nil, err
		}
	}
	// Not a recorded commit: ask git which commit the reference names.
	name, dirty := strings.CutSuffix(ref, dirtySuffix)
	dir := cmp.Or(r.Dir, ".")
	hash, err := gitstate.ResolveCommit(ctx, dir, name)
	if re := (*gitstate.RefError)(nil); errors.As(err, &re) {
		return nil, unknownRef(fmt.Sprintf("%s: not a file, run, stored commit or git reference (git: %s)", ref, re.Reason))
	}
	if err != nil {
		return nil, err
	}
	full := hash
	if dirty {
		full += dirtySuffix
	}
	record := "record them with 'perfscope bench' on a checkout of it"
	if s == nil {
		return nil, unknownRef(fmt.Sprintf("%s: commit %s has no stored results (no history database yet: %s)", ref, shortRef(full), record))
	}
	cs, err := s.CommitSamples(ctx, full, r.Filter)
	if err == nil {
		return commitInput(cs), nil
	}
	if !errors.Is(err, ErrUnknownCommit) {
		return nil, err
	}
	return nil, unknownRef(fmt.Sprintf("%s: commit %s has no stored results (%s); %s", ref, shortRef(full), nearestStored(ctx, s, dir, hash, r.Filter), record))
}

// nearestStored says which recorded commits are nearest to hash in the
// history of the repository at dir.
func nearestStored(ctx context.Context, s Store, dir, hash string, f Filter) string {
	f.Limit = 0
	commits, err := s.Commits(ctx, f)
	if err != nil {
		return "the stored commits could not be listed: " + err.Error()
	}
	// A commit's clean runs stand for it before its dirty ones.
	refs := make(map[string]string)
	var hashes []string
	stored := make(map[string]bool)
	for _, c := range commits {
		stored[c.Ref()] = true
		if _, ok := refs[c.Hash]; !ok {
			hashes = append(hashes, c.Hash)
			refs[c.Hash] = c.Ref()
		} else if !c.Dirty {
			refs[c.Hash] = c.Ref()
		}
	}
	switch {
	case stored[hash]:
		return "its runs on a clean work tree are stored as " + shortRef(hash)
	case stored[hash+dirtySuffix]:
		return "only runs on a modified work tree of it are stored, as " + shortRef(hash+dirtySuffix)
	}
	before, after, err := gitstate.Nearest(ctx, dir, hash, hashes)
	if err != nil {
		return "the nearest stored commits could not be found: " + err.Error()
	}
	var near []string
	for _, n := range []struct {
		n    *gitstate.Neighbour
		side string
	}{{before, "before"}, {after, "after"}} {
		if n.n == nil {
			continue
		}
		unit := "commits"
		if n.n.Distance == 1 {
			unit = "commit"
		}
		near = append(near, fmt.Sprintf("%s, %d %s %s", shortRef(refs[n.n.Commit]), n.n.Distance, unit, n.side))
	}
	if len(near) == 0 {
		return fmt.Sprintf("none of the %d stored commits is in its history", len(hashes))
	}
	return "nearest stored: " + strings.Join(near, "; ")
}

// shortRef shortens a stored commit reference for a message, keeping its
// "+dirty".
func shortRef(ref string) string {
	hash, dirty := strings.CutSuffix(ref, dirtySuffix)
	if dirty {
		return gitstate.Short(hash) + dirtySuffix
	}
	return gitstate.Short(hash)
}

// unknownRef is a reference that names no stored results, as one line.
type unknownRef string

func (e unknownRef) Error() string { return string(e) }
func (e unknownRef) Unwrap() error { return ErrUnknownCommit }

// commitInput turns a commit's samples into compare's input: one result
// per sample and unit, as if the runs had printed them, so the same
// statistics apply to files and to history.
func commitInput(cs *CommitSamples) *benchstats.Input {
	// The file-level lines a run's output starts with, so that a commit
	// and a benchmark file of the same machine and toolchain group into
	// one table, as two files would.
	var cfg []benchfmt.Config
	for _, c := range cs.Config {
		cfg = append(cfg, benchfmt.Config{Key: c.Key, Value: []byte(c.Value), File: true})
	}
	return &benchstats.Input{Read: func(ctx context.Context, add func(benchfmt.Record)) error {
		// Instruction counts are exact, as the files they were
		// recorded from said.
		add(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: bench.UnitInstructions, Key: "assume"}, OrigUnit: bench.UnitInstructions, Value: "exact"})
		for _, ss := range cs.Samples {
			for _, v := range ss.Values {
				add(&benchfmt.Result{
					Config: append(slices.Clip(cfg), benchfmt.Config{Key: "pkg", Value: []byte(ss.Package), File: true}),
					Name:   benchfmt.Name(ss.Name),
					Iters:  1,
					Values: []benchfmt.Value{{Value: v, Unit: ss.Unit}},
				})
			}
		}
		return nil
	}}
}
