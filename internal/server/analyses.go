package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// analyses computes the analysis of a run once per set of report options
// and shares it: a visitor never starts a computation another visitor (or
// the upload) already started. Analyses run in the background, at most
// slots at a time whatever the number of visitors, and a finished one is
// kept until maxAnalyses newer ones push it out. Reading a profile outside
// an analysis (an upload's check, pprof's views) takes a slot of its own
// kind, so that it never waits behind an analysis's build of the source.
type analyses struct {
	slots, parses chan struct{}
	mu            sync.Mutex
	m             map[analysisKey]*analysisEntry
	order         []analysisKey // oldest first
}

// maxAnalyses bounds the analyses kept. One is tables of a few hundred
// rows and the findings, tens of KiB.
const maxAnalyses = 256

type analysisKey struct {
	run  string
	opts profiles.Options
}

// An analysisEntry is one analysis, running or done.
type analysisEntry struct {
	done chan struct{}
	res  *analysis.Result
	err  error
	// tooLarge names the profiles the analysis could not read within
	// the server's limits.
	tooLarge []string
}

func newAnalyses(slots int) *analyses {
	return &analyses{slots: make(chan struct{}, slots), parses: make(chan struct{}, slots), m: make(map[analysisKey]*analysisEntry)}
}

// acquire takes one of slots, waiting while all are taken; it fails when
// ctx is done first.
func acquire(ctx context.Context, slots chan struct{}) (release func(), err error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// parsing takes a slot for reading profiles outside an analysis.
func (a *analyses) parsing(ctx context.Context) (release func(), err error) {
	return acquire(ctx, a.parses)
}

// errAnalysing is what a request gets when the analysis it waits for has
// not finished within the request's wait.
var errAnalysing = errors.New("the run is still being analysed")

// start returns the analysis of saved with opts, starting it in the
// background unless it is running or done.
func (s *Server) startAnalysis(saved *run.Run, opts profiles.Options) *analysisEntry {
	a := s.analyses
	key := analysisKey{saved.ID, opts}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.m[key]; ok {
		return e
	}
	e := &analysisEntry{done: make(chan struct{})}
	a.m[key] = e
	a.order = append(a.order, key)
	for len(a.order) > maxAnalyses {
		old := a.order[0]
		a.order = a.order[1:]
		delete(a.m, old)
	}
	go s.runAnalysis(saved, opts, e)
	return e
}

// runAnalysis computes e within the server's analysis budget.
func (s *Server) runAnalysis(saved *run.Run, opts profiles.Options, e *analysisEntry) {
	defer close(e.done)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.AnalysisTimeout)
	defer cancel()
	release, err := acquire(ctx, s.analyses.slots)
	if err != nil {
		e.err = fmt.Errorf("run %s waited longer than the analysis budget of %s for its turn", saved.ID, s.cfg.AnalysisTimeout)
		s.forgetAnalysis(analysisKey{saved.ID, opts}, e)
		return
	}
	defer release()
	in := analysis.FromRun(saved)
	in.Source = analysis.Source{Dir: s.cfg.SourceDir, Confined: true}
	e.res = analysis.Analyze(ctx, in, analysis.Options{Profiles: opts, NoCompiler: s.cfg.NoCompiler})
	for _, err := range e.res.Warnings {
		var le *fetch.LimitError
		if errors.As(err, &le) {
			e.tooLarge = append(e.tooLarge, err.Error())
		}
	}
}

// forgetAnalysis drops e, so that the next request starts again.
func (s *Server) forgetAnalysis(key analysisKey, e *analysisEntry) {
	a := s.analyses
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m[key] == e {
		delete(a.m, key)
	}
}

// forgetRun drops every analysis of a run.
func (a *analyses) forgetRun(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.m {
		if k.run == id {
			delete(a.m, k)
		}
	}
}

// analysisOf returns the analysis of saved with opts, waiting for it at
// most wait (and no longer than ctx allows); errAnalysing when it is not
// done by then. The analysis goes on in the background either way.
func (s *Server) analysisOf(ctx context.Context, saved *run.Run, opts profiles.Options, wait time.Duration) (*analysisEntry, error) {
	e := s.startAnalysis(saved, opts)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.done:
		if e.err != nil {
			return nil, e.err
		}
		return e, nil
	case <-t.C:
		return nil, errAnalysing
	case <-ctx.Done():
		return nil, errAnalysing
	}
}

// finished returns the analysis of saved with default options when it is
// done, starting it otherwise, without waiting.
func (s *Server) finished(saved *run.Run) (*analysisEntry, bool) {
	e := s.startAnalysis(saved, profiles.Options{})
	select {
	case <-e.done:
		return e, e.err == nil
	default:
		return nil, false
	}
}

// analyseLatest starts the analyses of the runs the home page shows, so
// that the first visitor after a start finds them done or under way.
func (s *Server) analyseLatest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: web.HomeRuns})
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logf("list the latest runs to analyse: %v", err)
		}
		return
	}
	for _, pr := range runs {
		if saved, err := s.loadRun(ctx, pr.ID); err == nil {
			s.startAnalysis(saved, profiles.Options{})
		}
	}
}

// pageWait is how long a page or report waits for an analysis before
// saying it is under way: most of the request's time.
func (s *Server) pageWait() time.Duration { return s.cfg.RequestTimeout * 3 / 4 }
