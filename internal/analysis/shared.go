package analysis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// Shared computes the analysis of a saved run once per set of report
// options and shares it among its callers: a caller never starts a
// computation another (a visitor of the dashboard, an upload) already
// started. Analyses run in the background, at most Slots at a time however
// many callers wait, and a finished one is kept until maxShared newer ones
// push it out. Reading a profile outside an analysis (an upload's check,
// pprof's views) takes a slot of its own kind, so that it never waits
// behind an analysis's build of the source.
type Shared struct {
	cfg           SharedConfig
	slots, parses chan struct{}
	mu            sync.Mutex
	m             map[sharedKey]*Entry
	order         []sharedKey // oldest first
}

// SharedConfig configures a Shared.
type SharedConfig struct {
	// Slots is how many analyses run at once, and how many profile
	// reads outside them; at least 1.
	Slots int
	// Timeout bounds one analysis, its wait for a slot included.
	Timeout time.Duration
	// Source is where the runs' source is, for every analysis.
	Source Source
	// NoCompiler is Options.NoCompiler, for every analysis.
	NoCompiler bool
}

// maxShared bounds the analyses kept. One is tables of a few hundred rows
// and the findings, tens of KiB.
const maxShared = 256

type sharedKey struct {
	run  string
	opts profiles.Options
}

// An Entry is one shared analysis, running or done.
type Entry struct {
	done chan struct{}
	// Result is the analysis, once done without Err.
	Result *Result
	Err    error
	// TooLarge names the profiles the analysis could not read within
	// the limits of the run's profiles.
	TooLarge []string
}

// ErrAnalysing is what a caller gets when the analysis it waits for has
// not finished within its wait.
var ErrAnalysing = errors.New("the run is still being analysed")

// NewShared returns an empty Shared.
func NewShared(cfg SharedConfig) *Shared {
	cfg.Slots = max(1, cfg.Slots)
	return &Shared{cfg: cfg, slots: make(chan struct{}, cfg.Slots), parses: make(chan struct{}, cfg.Slots), m: make(map[sharedKey]*Entry)}
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

// Parsing takes a slot for reading profiles outside an analysis.
func (s *Shared) Parsing(ctx context.Context) (release func(), err error) {
	return acquire(ctx, s.parses)
}

// Start returns the analysis of saved with opts, starting it in the
// background unless it is running or done.
func (s *Shared) Start(saved *run.Run, opts profiles.Options) *Entry {
	key := sharedKey{saved.ID, opts}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok {
		return e
	}
	e := &Entry{done: make(chan struct{})}
	s.m[key] = e
	s.order = append(s.order, key)
	for len(s.order) > maxShared {
		old := s.order[0]
		s.order = s.order[1:]
		delete(s.m, old)
	}
	go s.analyse(saved, opts, e)
	return e
}

// analyse computes e within the analysis budget.
func (s *Shared) analyse(saved *run.Run, opts profiles.Options, e *Entry) {
	defer close(e.done)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	release, err := acquire(ctx, s.slots)
	if err != nil {
		e.Err = fmt.Errorf("run %s waited longer than the analysis budget of %s for its turn", saved.ID, s.cfg.Timeout)
		s.forget(sharedKey{saved.ID, opts}, e)
		return
	}
	defer release()
	in := FromRun(saved)
	in.Source = s.cfg.Source
	e.Result = Analyze(ctx, in, Options{Profiles: opts, NoCompiler: s.cfg.NoCompiler})
	for _, err := range e.Result.Warnings {
		var le *fetch.LimitError
		if errors.As(err, &le) {
			e.TooLarge = append(e.TooLarge, err.Error())
		}
	}
}

// forget drops e, so that the next caller starts again.
func (s *Shared) forget(key sharedKey, e *Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] == e {
		delete(s.m, key)
	}
}

// ForgetRun drops every analysis of a run.
func (s *Shared) ForgetRun(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if k.run == id {
			delete(s.m, k)
		}
	}
}

// Wait returns the analysis of saved with opts, waiting for it at most
// wait (and no longer than ctx allows); ErrAnalysing when it is not done
// by then. The analysis goes on in the background either way.
func (s *Shared) Wait(ctx context.Context, saved *run.Run, opts profiles.Options, wait time.Duration) (*Entry, error) {
	e := s.Start(saved, opts)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.done:
		if e.Err != nil {
			return nil, e.Err
		}
		return e, nil
	case <-t.C:
		return nil, ErrAnalysing
	case <-ctx.Done():
		return nil, ErrAnalysing
	}
}

// Finished returns the analysis of saved with default options when it is
// done, starting it otherwise, without waiting.
func (s *Shared) Finished(saved *run.Run) (*Entry, bool) {
	e := s.Start(saved, profiles.Options{})
	select {
	case <-e.done:
		return e, e.Err == nil
	default:
		return nil, false
	}
}
