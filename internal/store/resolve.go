package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/benchstats"
)

// A CommitResolver resolves compare's references that name a recorded
// commit (a hash or a unique prefix of at least 4 characters, "+dirty" for
// runs on a modified tree) into that commit's stored samples.
type CommitResolver struct {
	// DB is the store to open, as Open takes it; the store is opened only
	// when a reference is not a file, so comparing files needs no database.
	DB     string
	Filter Filter
}

// Resolve implements benchstats.Resolver.
func (r CommitResolver) Resolve(ctx context.Context, ref string) (*benchstats.Input, error) {
	s, err := OpenExisting(ctx, r.DB)
	if errors.Is(err, ErrNoDatabase) {
		return nil, fmt.Errorf("%s is neither a benchmark file nor a recorded commit (no history database yet: record results with 'perfscope bench'): %w", ref, benchstats.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cs, err := s.CommitSamples(ctx, ref, r.Filter)
	if errors.Is(err, ErrUnknownCommit) {
		return nil, fmt.Errorf("%s is neither a benchmark file nor a recorded commit: %w", ref, benchstats.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return commitInput(cs), nil
}

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
