package analysis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/run"
)

// A SeriesReader is what FromSeries reads of a profile-series store
// (store.ProfileSeries satisfies it).
type SeriesReader interface {
	// MergedProfile merges the scrapes a query chooses into one profile.
	MergedProfile(ctx context.Context, q profseries.Query) (*profile.Profile, error)
	// BlockEdges lists, per series a query chooses, the starts of its
	// first and last scrapes in the range, without reading them.
	BlockEdges(ctx context.Context, q profseries.Query) ([]profseries.SeriesEdges, error)
	// MergedAt merges the scrapes of type typ each point names (its
	// series, at its instant) into one profile.
	MergedAt(ctx context.Context, typ string, points []profseries.SeriesInstant) (*profile.Profile, error)
	// SeriesLabels lists the label sets of the series of one type that
	// a selector chooses.
	SeriesLabels(ctx context.Context, typ string, sel profseries.Selector) ([]profseries.Labels, error)
	// ProcessSpans lists the time each process's scrapes a query chooses
	// span, without reading the scrapes.
	ProcessSpans(ctx context.Context, q profseries.Query) ([]profseries.ProcessSpan, error)
}

// seriesKinds maps the profile types a scraper stores to the kinds of a
// saved run whose analysis they feed; goroutine snapshots become the
// window's first and last goroutines instead.
var seriesKinds = map[string]string{
	profseries.CPU:    run.KindCPU,
	profseries.Allocs: run.KindAllocs,
	profseries.Heap:   run.KindHeap,
	profseries.Block:  run.KindBlock,
	profseries.Mutex:  run.KindMutex,
}

// FromSeries is the Input of a scraped time range: for each profile type,
// the scrapes of the series sel chooses over [from, to) merged into one
// profile (the fleet's, when sel chooses several targets); goroutines as
// each series' first and last snapshot in the range. The window is the
// span the CPU scrapes cover, so CPU reads as cores used over it, summed
// over the targets. There is no load result: the traffic was the
// service's own. A type with nothing stored in the range is Missing.
func FromSeries(ctx context.Context, src SeriesReader, sel profseries.Selector, from, to time.Time) (Input, error) {
	set := profiles.Set{Profiles: map[string]*profile.Profile{}, KindSeconds: map[string]float64{}, Target: "profiles scraped from " + sel.String()}
	// Each type, and the goroutines, read at once.
	type typeRead struct {
		kind        string
		profile     *profile.Profile
		first, last time.Time
		missing     string
	}
	types := slices.Sorted(maps.Keys(seriesKinds))
	reads := make([]typeRead, len(types))
	var gs profiles.Set // the goroutines' part
	gs.Profiles = map[string]*profile.Profile{}
	g, gctx := errgroup.WithContext(ctx)
	for i, typ := range types {
		r := &reads[i]
		r.kind = seriesKinds[typ]
		g.Go(func() error {
			q := profseries.Query{Type: typ, Selector: sel, From: from, To: to}
			spans, err := src.ProcessSpans(gctx, q)
			if err != nil {
				return err
			}
			if len(spans) == 0 {
				r.missing = fmt.Sprintf("nothing scraped from %s between %s and %s", sel, from.Format(time.RFC3339), to.Format(time.RFC3339))
				return nil
			}
			if r.profile, err = src.MergedProfile(gctx, q); err != nil {
				return err
			}
			r.first, r.last = profseries.Spanned(spans)
			return nil
		})
	}
	g.Go(func() error { return goroutines(gctx, src, sel, from, to, &gs) })
	if err := g.Wait(); err != nil {
		return Input{}, err
	}
	var start, end time.Time
	for i, r := range reads {
		if r.missing != "" {
			set.Missing = append(set.Missing, profiles.ProfileError{Kind: r.kind, Error: r.missing})
			continue
		}
		set.Profiles[r.kind] = r.profile
		if types[i] == profseries.CPU {
			start, end = r.first, r.last
		}
		set.KindSeconds[r.kind] = r.last.Sub(r.first).Seconds()
	}
	maps.Copy(set.Profiles, gs.Profiles)
	set.Missing = append(set.Missing, gs.Missing...)
	if start.IsZero() {
		start, end = from, to
	}
	set.Start, set.Seconds = start, end.Sub(start).Seconds()
	return Input{Set: set}, nil
}

// goroutines sets the window's first and last goroutines: per series, its
// first and last snapshot in the range, merged over the series.
func goroutines(ctx context.Context, src SeriesReader, sel profseries.Selector, from, to time.Time, set *profiles.Set) error {
	edges, err := src.BlockEdges(ctx, profseries.Query{Type: profseries.Goroutine, Selector: sel, From: from, To: to})
	if err != nil {
		return err
	}
	edges = slices.DeleteFunc(edges, func(e profseries.SeriesEdges) bool { return !e.Last.After(e.First) }) // one snapshot
	if len(edges) == 0 {
		why := "fewer than two goroutine snapshots of any series in the range"
		set.Missing = append(set.Missing,
			profiles.ProfileError{Kind: run.KindGoroutineStart, Error: why},
			profiles.ProfileError{Kind: run.KindGoroutineEnd, Error: why})
		return nil
	}
	// The first snapshots merged into one profile, the last into another,
	// both at once.
	kinds := []string{run.KindGoroutineStart, run.KindGoroutineEnd}
	merged := make([]*profile.Profile, len(kinds))
	g, gctx := errgroup.WithContext(ctx)
	for i := range kinds {
		g.Go(func() (err error) {
			points := make([]profseries.SeriesInstant, len(edges))
			for k, e := range edges {
				points[k] = profseries.SeriesInstant{Target: e.Target, At: e.First}
				if i == 1 {
					points[k].At = e.Last
				}
			}
			merged[i], err = src.MergedAt(gctx, profseries.Goroutine, points)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return errors.New("merge goroutine snapshots: " + err.Error())
	}
	for i, kind := range kinds {
		set.Profiles[kind] = merged[i]
	}
	return nil
}
