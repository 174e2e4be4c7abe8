package analysis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/pprof/profile"

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
	var start, end time.Time
	for typ, kind := range seriesKinds {
		q := profseries.Query{Type: typ, Selector: sel, From: from, To: to}
		spans, err := src.ProcessSpans(ctx, q)
		if err != nil {
			return Input{}, err
		}
		if len(spans) == 0 {
			set.Missing = append(set.Missing, profiles.ProfileError{Kind: kind, Error: fmt.Sprintf("nothing scraped from %s between %s and %s", sel, from.Format(time.RFC3339), to.Format(time.RFC3339))})
			continue
		}
		p, err := src.MergedProfile(ctx, q)
		if err != nil {
			return Input{}, err
		}
		set.Profiles[kind] = p
		first, last := profseries.Spanned(spans)
		if typ == profseries.CPU {
			start, end = first, last
		}
		set.KindSeconds[kind] = last.Sub(first).Seconds()
	}
	if err := goroutines(ctx, src, sel, from, to, &set); err != nil {
		return Input{}, err
	}
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
	var starts, ends []*profile.Profile
	for _, e := range edges {
		if !e.Last.After(e.First) {
			continue // one snapshot
		}
		exact := profseries.Exact(e.Target)
		for i, at := range []time.Time{e.First, e.Last} {
			p, err := src.MergedProfile(ctx, profseries.Query{Type: profseries.Goroutine, Selector: exact, From: at, To: at.Add(time.Nanosecond)})
			if err != nil {
				return err
			}
			if i == 0 {
				starts = append(starts, p)
			} else {
				ends = append(ends, p)
			}
		}
	}
	if len(starts) == 0 {
		why := "fewer than two goroutine snapshots of any series in the range"
		set.Missing = append(set.Missing,
			profiles.ProfileError{Kind: run.KindGoroutineStart, Error: why},
			profiles.ProfileError{Kind: run.KindGoroutineEnd, Error: why})
		return nil
	}
	for kind, ps := range map[string][]*profile.Profile{run.KindGoroutineStart: starts, run.KindGoroutineEnd: ends} {
		p, err := profile.Merge(ps)
		if err != nil {
			return errors.New("merge goroutine snapshots: " + err.Error())
		}
		set.Profiles[kind] = p
	}
	return nil
}
