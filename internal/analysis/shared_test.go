package analysis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profiles"
)

// TestSharedOnce checks that callers of a Shared get one analysis per run
// and options, the same as Analyze's, and that a forgotten run is analysed
// again.
func TestSharedOnce(t *testing.T) {
	r := loadCommitted(t)
	s := NewShared(SharedConfig{Slots: 1, Timeout: time.Minute, NoCompiler: true})
	first := s.Start(r, profiles.Options{})
	ctx := context.Background()
	e, err := s.Wait(ctx, r, profiles.Options{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if e != first {
		t.Error("a second caller started another analysis of the same run")
	}
	if done, ok := s.Finished(r); !ok || done != e {
		t.Error("a finished analysis is not Finished")
	}
	want := Analyze(ctx, FromRun(r), Options{NoCompiler: true})
	if len(e.Result.Findings) != len(want.Findings) || e.Result.Analysis.Run.ID != want.Analysis.Run.ID {
		t.Errorf("shared analysis has %d findings of run %s; Analyze %d of %s", len(e.Result.Findings), e.Result.Analysis.Run.ID, len(want.Findings), want.Analysis.Run.ID)
	}
	if other := s.Start(r, profiles.Options{Top: 3}); other == e {
		t.Error("other options share the default analysis")
	}
	s.ForgetRun(r.ID)
	if again := s.Start(r, profiles.Options{}); again == e {
		t.Error("a forgotten run's analysis is still shared")
	}
}

// TestSharedWaitEnds checks that a caller whose context ends stops waiting
// with ErrAnalysing while the analysis goes on.
func TestSharedWaitEnds(t *testing.T) {
	r := loadCommitted(t)
	s := NewShared(SharedConfig{Slots: 1, Timeout: time.Minute, NoCompiler: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Wait(ctx, r, profiles.Options{}, time.Minute); !errors.Is(err, ErrAnalysing) {
		// The analysis may have finished first; it is then the answer.
		if err != nil {
			t.Fatalf("wait ended by its context: %v; want ErrAnalysing", err)
		}
	}
	if _, err := s.Wait(context.Background(), r, profiles.Options{}, time.Minute); err != nil {
		t.Fatalf("the analysis did not go on after a caller left: %v", err)
	}
}
