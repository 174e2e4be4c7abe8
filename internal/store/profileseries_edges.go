package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// edgeResolutions are the resolutions blocks are kept at (not rollups).
var edgeResolutions = []int64{0, resolutionMinute, resolutionTenMinutes}

// edgesQuery reads, for one series and range, the first and last start
// of its blocks at each of edgeResolutions: a bounded read of the
// blocks' key per value (a minimum or maximum under a key prefix),
// whatever the number of blocks between.
var edgesQuery = func() string {
	var cols []string
	for range edgeResolutions {
		for _, agg := range []string{"MIN", "MAX"} {
			cols = append(cols, `(SELECT `+agg+`(start_time) FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ?)`)
		}
	}
	return `SELECT ` + strings.Join(cols, ", ")
}()

// BlockEdges lists, per series q chooses with a block starting in
// [q.From, q.To), the starts of its first and last such block (see
// profseries.SeriesEdges), in the order of the series' ids. Rollups are
// not counted (their hours' blocks are). It reads a few keys per series
// and decodes nothing.
func (ps *ProfileSeries) BlockEdges(ctx context.Context, q profseries.Query) ([]profseries.SeriesEdges, error) {
	series, _, ids, err := ps.seriesOf(ctx, q)
	if err != nil {
		return nil, err
	}
	from, to := nanos(q.From), nanos(q.To)
	var out []profseries.SeriesEdges
	for _, id := range ids {
		args := make([]any, 0, 8*len(edgeResolutions))
		for _, res := range edgeResolutions {
			for range 2 {
				args = append(args, int64(id), res, from, to)
			}
		}
		var v [6]sql.NullInt64
		if err := ps.b.db.QueryRowContext(ctx, ps.b.q(edgesQuery), args...).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]); err != nil {
			return nil, fmt.Errorf("read profile blocks' edges: %w", err)
		}
		ps.b.rowsRead.Add(1)
		var first, last int64
		found := false
		for i := 0; i < len(v); i += 2 {
			if !v[i].Valid {
				continue
			}
			if !found || v[i].Int64 < first {
				first = v[i].Int64
			}
			if !found || v[i+1].Int64 > last {
				last = v[i+1].Int64
			}
			found = true
		}
		if found {
			out = append(out, profseries.SeriesEdges{Target: series[int64(id)], First: fromNanos(first), Last: fromNanos(last)})
		}
	}
	return out, nil
}

// MergedAt merges the blocks of type typ that start at each point's
// instant in the series of exactly its labels (the series' snapshot
// then) into one profile, built once: what findings read of the first
// and last goroutines of many series.
func (ps *ProfileSeries) MergedAt(ctx context.Context, typ string, points []profseries.SeriesInstant) (*profile.Profile, error) {
	var m profseries.Merger
	for _, p := range points {
		q := profseries.Query{Type: typ, Selector: profseries.Exact(p.Target), From: p.At, To: p.At.Add(time.Nanosecond)}
		err := ps.eachBlock(ctx, q, "data", false, func(dec *blockDecoder, b storedBlock) error {
			samples, err := dec.samples(b.series, b.resolution, nanos(b.w.Start), b.data)
			if err != nil || !slices.Equal(b.w.Processes[0].Target, p.Target) {
				return err // another series the labels choose too
			}
			b.w.Samples = samples
			return m.Add(b.w)
		})
		if err != nil {
			return nil, err
		}
	}
	if m.Windows() == 0 {
		return nil, fmt.Errorf("%w for %s at the instants asked", ErrNoProfiles, typ)
	}
	w, err := m.Window()
	if err != nil {
		return nil, err
	}
	return profseries.BuildProfile(w, readSymbols{ctx, ps})
}
