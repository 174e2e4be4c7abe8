package server

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/store"
)

// A commitComparison is benchstat's comparison of two recorded commits,
// and where their instruction counts changed.
type commitComparison struct {
	Base, Head *store.CommitSamples
	Cmp        *benchstats.Comparison
	Changes    []gate.RecordedChange
}

// compareQuery is what a comparison request asks for.
type compareQuery struct {
	Base, Head string
	Filter     store.Filter
	Alpha      float64
}

// parseCompareQuery reads base and head (commit refs, required) with the
// filter parameters and alpha.
func parseCompareQuery(q url.Values) (compareQuery, error) {
	cq := compareQuery{Base: strings.TrimSpace(q.Get("base")), Head: strings.TrimSpace(q.Get("head"))}
	if cq.Base == "" || cq.Head == "" {
		return cq, badRequest("give two commits: ?base=HASH&head=HASH (a unique prefix of at least 4 characters will do)")
	}
	var err error
	if cq.Filter, err = parseFilter(q); err != nil {
		return cq, err
	}
	if cq.Alpha, err = parseAlpha(q); err != nil {
		return cq, err
	}
	return cq, nil
}

// parseAlpha reads the U test's significance level, default 0.05.
func parseAlpha(q url.Values) (float64, error) {
	v := q.Get("alpha")
	if v == "" {
		return 0.05, nil
	}
	a, err := strconv.ParseFloat(v, 64)
	if err != nil || !(a > 0 && a < 1) {
		return 0, badRequest(fmt.Sprintf("alpha %q: want a number between 0 and 1", v))
	}
	return a, nil
}

// compareCommits compares every benchmark metric the two commits share,
// exactly as 'perfscope compare' compares two files.
func (s *Server) compareCommits(ctx context.Context, cq compareQuery) (*commitComparison, error) {
	base, err := s.cfg.Store.CommitSamples(ctx, cq.Base, cq.Filter)
	if err != nil {
		return nil, err
	}
	head, err := s.cfg.Store.CommitSamples(ctx, cq.Head, cq.Filter)
	if err != nil {
		return nil, err
	}
	bl, hl := shortRef(base.Commit.Ref()), shortRef(head.Commit.Ref())
	if bl == hl {
		bl, hl = bl+" (base)", hl+" (head)"
	}
	// The same input 'perfscope compare' reads a stored commit as.
	bin, hin := store.CommitInput(base), store.CommitInput(head)
	bin.Label, hin.Label = bl, hl
	inputs := []*benchstats.Input{bin, hin}
	cmp, err := benchstats.Compare(ctx, inputs, benchstats.Options{Alpha: cq.Alpha})
	if err != nil {
		return nil, badRequest(err.Error())
	}
	changes, err := gate.ExplainRecorded(ctx, s.cfg.Store, base, head, cq.Filter, gate.DefaultInstructionsPct/100, 0)
	if err != nil {
		return nil, err
	}
	return &commitComparison{Base: base, Head: head, Cmp: cmp, Changes: changes}, nil
}

// shortRef abbreviates a commit ref for labels (see gitstate.ShortRef).
func shortRef(ref string) string { return gitstate.ShortRef(ref) }
