package dashboard

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// A CommitComparison is benchstat's comparison of two recorded commits,
// and where their instruction counts changed.
type CommitComparison struct {
	Base, Head *store.CommitSamples
	Cmp        *benchstats.Comparison
	Changes    []gate.RecordedChange
}

// CompareCommits compares every benchmark metric the two commits share,
// exactly as 'perfscope compare' compares two files.
func (d *Dashboard) CompareCommits(ctx context.Context, cq CompareQuery) (*CommitComparison, error) {
	base, err := d.cfg.Store.CommitSamples(ctx, cq.Base, cq.Filter)
	if err != nil {
		return nil, err
	}
	head, err := d.cfg.Store.CommitSamples(ctx, cq.Head, cq.Filter)
	if err != nil {
		return nil, err
	}
	bl, hl := gitstate.ShortRef(base.Commit.Ref()), gitstate.ShortRef(head.Commit.Ref())
	if bl == hl {
		bl, hl = bl+" (base)", hl+" (head)"
	}
	// The same input 'perfscope compare' reads a stored commit as.
	bin, hin := store.CommitInput(base), store.CommitInput(head)
	bin.Label, hin.Label = bl, hl
	inputs := []*benchstats.Input{bin, hin}
	cmp, err := benchstats.Compare(ctx, inputs, benchstats.Options{Alpha: cq.Alpha})
	if err != nil {
		return nil, BadInput(err.Error())
	}
	changes, err := gate.ExplainRecorded(ctx, d.cfg.Store, base, head, cq.Filter, gate.DefaultInstructionsPct/100, 0)
	if err != nil {
		return nil, err
	}
	return &CommitComparison{Base: base, Head: head, Cmp: cmp, Changes: changes}, nil
}

// Compare is the comparison page of two commits (base, head, with branch,
// machine and alpha) or two runs (base_run, head_run). What the query
// names wrongly (a typo in a commit) is said on the page, which keeps the
// form as typed, and returned too, for its kind: a page and an error
// together. A nil page is the dashboard's own failure.
func (d *Dashboard) Compare(ctx context.Context, q url.Values) (*web.Compare, error) {
	data := &web.Compare{Base: q.Get("base"), Head: q.Get("head"), Branch: q.Get("branch"), Machine: q.Get("machine"),
		BaseRun: q.Get("base_run"), HeadRun: q.Get("head_run"), Alpha: 0.05}
	var err error
	if data.Runs, err = d.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: 200}); err != nil {
		return nil, err
	}
	switch {
	case data.Base != "" || data.Head != "":
		var cq CompareQuery
		cq, err = ParseCompareQuery(q)
		if err == nil {
			data.Alpha = cq.Alpha
			var cc *CommitComparison
			if cc, err = d.CompareCommits(ctx, cq); err == nil {
				data.Commits = web.NewCommitComparison(cc.Base, cc.Head, cc.Cmp)
				data.Instructions = web.NewInstructionChanges(cc.Base.Commit, cc.Head.Commit, cc.Changes)
				data.CommitRuns = d.runsOfCommits(ctx, cc.Base.Commit, cc.Head.Commit)
			}
		}
	case data.BaseRun != "" || data.HeadRun != "":
		data.RunCmp, err = d.compareRuns(ctx, data.BaseRun, data.HeadRun)
	}
	if err != nil {
		data.Error = err.Error()
	}
	return data, err
}

// runsOfCommits finds the latest run of each commit, or nil when either
// commit has none.
func (d *Dashboard) runsOfCommits(ctx context.Context, base, head store.Commit) *web.CommitRuns {
	find := func(c store.Commit) string {
		runs, err := d.cfg.Store.ProfileRuns(ctx, store.RunFilter{Commit: c.Ref(), Limit: 1})
		if err != nil || len(runs) == 0 {
			return ""
		}
		return runs[0].ID
	}
	cr := &web.CommitRuns{Base: find(base), Head: find(head)}
	if cr.Base == "" || cr.Head == "" || cr.Base == cr.Head {
		return nil
	}
	b, err := d.Run(ctx, cr.Base)
	if err != nil {
		return nil
	}
	h, err := d.Run(ctx, cr.Head)
	if err != nil {
		return nil
	}
	cr.Kinds = web.SharedKinds(b, h)
	return cr
}

// compareRuns puts two runs side by side as 'perfscope demo' does.
func (d *Dashboard) compareRuns(ctx context.Context, baseID, headID string) (*web.RunComparison, error) {
	if baseID == "" || headID == "" {
		return nil, BadInput("choose two runs to compare")
	}
	base, err := d.Run(ctx, baseID)
	if err != nil {
		return nil, err
	}
	head, err := d.Run(ctx, headID)
	if err != nil {
		return nil, err
	}
	be, err := d.Analysis(ctx, base, profiles.Options{})
	if err != nil {
		return nil, err
	}
	he, err := d.Analysis(ctx, head, profiles.Options{})
	if err != nil {
		return nil, err
	}
	return web.NewRunComparison(base, head, be.Result, he.Result), nil
}

// InstructionRuns reads the benchmark runs (numbered, as text) whose
// instruction profiles of package pkg's benchmark name are compared, and
// checks that both kept that profile: NotFound when either did not.
func (d *Dashboard) InstructionRuns(ctx context.Context, base, head, pkg, name string) (int64, int64, error) {
	b, berr := strconv.ParseInt(base, 10, 64)
	h, herr := strconv.ParseInt(head, 10, 64)
	if berr != nil || herr != nil {
		return 0, 0, NotFound("benchmark runs are numbered: " + base + ", " + head)
	}
	for _, id := range []int64{b, h} {
		if _, err := d.cfg.Store.InstructionProfileData(ctx, id, pkg, name); errors.Is(err, store.ErrNoInstructionProfile) {
			return 0, 0, NotFound(err.Error())
		} else if err != nil {
			return 0, 0, err
		}
	}
	return b, h, nil
}

// InstructionProfiles returns the per-operation instruction profiles of
// one benchmark in two benchmark runs, for their difference.
func (d *Dashboard) InstructionProfiles(ctx context.Context, base, head int64, pkg, name string) (bp, hp *profile.Profile, err error) {
	return gate.RecordedDiff(ctx, d.cfg.Store, base, head, pkg, name)
}
