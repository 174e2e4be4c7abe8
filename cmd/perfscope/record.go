package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// storeGrace bounds recording in the store, which also runs after an
// interruption.
const storeGrace = 30 * time.Second

// recordFlags choose where results are recorded for history.
type recordFlags struct {
	db      string
	noStore bool
}

func (f *recordFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.db, "db", "", "SQLite file or postgres:// URL of the store that records "+what+" (default ~/.perfscope/perfscope.db)")
	fs.BoolVar(&f.noStore, "no-store", false, "do not record "+what+" in the store")
}

// recorder is what recording needs of the store: it adds benchmark runs to
// the history and profiling runs to the run index.
type recorder interface {
	SaveBenchRun(ctx context.Context, saved store.BenchRun) (int64, error)
	SaveProfileRun(ctx context.Context, saved *run.Run) error
}

// withStore opens the store unless recording is off and calls save with it.
// Recording is a convenience on top of files already saved, so a store that
// cannot be opened or written is reported on w, not fatal. It runs on a
// context that an interruption does not cancel, bounded by storeGrace:
// what Ctrl-C kept on disk is recorded too.
func (f *recordFlags) withStore(ctx context.Context, w io.Writer, save func(context.Context, recorder) error) {
	if f.noStore {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeGrace)
	defer cancel()
	s, err := store.Open(ctx, f.db)
	if err == nil {
		err = save(ctx, s)
		s.Close()
	}
	if err != nil {
		fmt.Fprintf(w, "perfscope: not recorded in the store: %v (the files are saved; --no-store skips recording)\n", err)
	}
}

// recordProfileRuns indexes saved profiling runs in the store.
func (f *recordFlags) recordProfileRuns(ctx context.Context, w io.Writer, runs ...*run.Run) {
	f.withStore(ctx, w, func(ctx context.Context, s recorder) error {
		for _, r := range runs {
			if err := s.SaveProfileRun(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
}
