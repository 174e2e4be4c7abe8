package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// edgeResolutions are the resolutions blocks are kept at (not rollups).
var edgeResolutions = []int64{0, resolutionMinute, resolutionTenMinutes}

// edgesQuery reads, for series and a range, the first and last start of
// each series' blocks at each of edgeResolutions: a bounded read of the
// blocks' key per value (a minimum or maximum under a key prefix),
// whatever the number of blocks between, and one statement for many
// series (their ids appended, see inList).
var edgesQuery = func() string {
	var cols []string
	for range edgeResolutions {
		for _, agg := range []string{"MIN", "MAX"} {
			cols = append(cols, `(SELECT `+agg+`(start_time) FROM prof_blocks WHERE series_id = s.id AND resolution = ? AND start_time >= ? AND start_time < ?)`)
		}
	}
	return `SELECT s.id, ` + strings.Join(cols, ", ") + ` FROM prof_series s WHERE s.id IN `
}()

// BlockEdges lists, per series q chooses with a block starting in
// [q.From, q.To), the starts of its first and last such block (see
// profseries.SeriesEdges), in the order of the series' ids. Rollups are
// not counted (their hours' blocks are). It reads a few keys per series
// and decodes nothing.
func (ps *ProfileSeries) BlockEdges(ctx context.Context, q profseries.Query) ([]profseries.SeriesEdges, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	series, _, ids, err := ps.seriesOf(ctx, q)
	if err != nil {
		return nil, err
	}
	from, to := nanos(q.From), nanos(q.To)
	args := make([]any, 0, 6*len(edgeResolutions))
	for _, res := range edgeResolutions {
		for range 2 {
			args = append(args, res, from, to)
		}
	}
	var out []profseries.SeriesEdges
	for part := range chunks(ids, 500) {
		sq, sargs := inList(edgesQuery, part, slices.Clone(args)...)
		err := ps.b.each(ctx, sq+` ORDER BY s.id`, sargs, func(rows *sql.Rows) error {
			var id int64
			var v [6]sql.NullInt64
			if err := rows.Scan(&id, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]); err != nil {
				return err
			}
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
				out = append(out, profseries.SeriesEdges{Target: series[id], First: fromNanos(first), Last: fromNanos(last)})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read profile blocks' edges: %w", err)
		}
	}
	return out, nil
}

// MergedAt merges the blocks of type typ that start at each point's
// instant in the series of exactly its labels (the series' snapshot
// then) into one profile, built once: what findings read of the first
// and last goroutines of many series. The points whose instants fall in
// one span of chains (see chainStart), as the first snapshots of a
// fleet's series do, are read at once: their series' blocks from the
// span's start to the last of their instants, each decoded up to its
// series' instant.
func (ps *ProfileSeries) MergedAt(ctx context.Context, typ string, points []profseries.SeriesInstant) (*profile.Profile, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	all, err := ps.allSeries(ctx)
	if err != nil {
		return nil, fmt.Errorf("read profile series: %w", err)
	}
	processes, err := ps.knownProcesses(ctx)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, p := range points {
		wanted[p.Target.String()] = true
	}
	byLabels := map[string]seriesLabels{}
	for _, s := range all[typ] {
		if k := s.labels.String(); wanted[k] {
			byLabels[k] = s
		}
	}
	// The instant of each series, by the span of chains it is in.
	spans := map[int64]map[int64]int64{}
	labels := map[int64]profseries.Labels{}
	for _, p := range points {
		s, ok := byLabels[p.Target.String()]
		if !ok {
			continue
		}
		at := nanos(p.At)
		c := ps.chainStart(at)
		if spans[c] == nil {
			spans[c] = map[int64]int64{}
		}
		spans[c][s.id] = at
		labels[s.id] = s.labels
	}
	ctx, err = ps.withRecordsState(ctx)
	if err != nil {
		return nil, err
	}
	epoch, err := ps.epoch(ctx)
	if err != nil {
		return nil, err
	}
	var m profseries.Merger
	for _, c := range slices.Sorted(maps.Keys(spans)) {
		w, err := ps.keptAt(ctx, typ, epoch, c, spans[c], labels, processes)
		if err != nil {
			return nil, err
		}
		if w != nil {
			if err := m.Add(*w); err != nil {
				return nil, err
			}
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

// keptAt returns the merge of the blocks of type typ of the series of at
// (each one's instant, all in the span of chains starting at c) that
// start at their instants, nil where there are none. Instants where the
// records are closed (see recordsState.closed) are merged once, kept
// under the records' revision and the collection epoch: the first
// snapshots of a range stay where they are for as long as its start is
// in one bucket, and a snapshot before a deploy for good.
func (ps *ProfileSeries) keptAt(ctx context.Context, typ string, epoch, c int64, at map[int64]int64, labels map[int64]profseries.Labels, processes map[int64]profseries.Process) (*profseries.Window, error) {
	ids := make([]uint64, 0, len(at))
	last := int64(0)
	for id, t := range at {
		ids = append(ids, uint64(id))
		last = max(last, t)
	}
	slices.Sort(ids)
	key := ""
	if st, ok := ctx.Value(stateKey{}).(recordsState); ok && st.closed(0, last+1) {
		h := newKeyHasher()
		h.str("instants " + typ)
		for _, v := range []int64{st.rev, epoch, c} {
			h.int(v)
		}
		for _, id := range ids {
			h.int(int64(id))
			h.int(at[int64(id)])
		}
		key = h.key()
		if w, ok := ps.buckets.get(key); ok {
			return &w, nil
		}
	}
	m, err := ps.mergedAt(ctx, typ, c, at, ids, last, labels, processes, false)
	if errors.Is(err, errStaleMark) {
		ps.staleMarks.Add(1)
		m, err = ps.mergedAt(ctx, typ, c, at, ids, last, labels, processes, true) // a scrape stored while they were read
	}
	if err != nil || m.Windows() == 0 {
		return nil, err
	}
	w, err := m.Window()
	if err != nil {
		return nil, err
	}
	if key != "" {
		ps.buckets.put(key, w, windowSize(w)+len(key))
	}
	return &w, nil
}

// mergedAt merges the blocks of type typ of the series ids (ascending) of
// at, in the span of chains starting at c, that start at their instants
// (see MergedAt), the latest of which is last; fresh decodes every chain
// from its start, not from the chains' marks.
func (ps *ProfileSeries) mergedAt(ctx context.Context, typ string, c int64, at map[int64]int64, ids []uint64, last int64, labels map[int64]profseries.Labels, processes map[int64]profseries.Process, fresh bool) (*profseries.Merger, error) {
	var m profseries.Merger
	dec := ps.decoder(ctx, typ)
	dec.fresh = fresh
	// The chains are marked at every minute they pass: the next
	// read's instants, a little later, resume from the minute
	// before theirs.
	var minutes []int64
	for m := c + gaugeMinute; m <= last; m += gaugeMinute {
		minutes = append(minutes, m)
	}
	for part := range chunks(ids, 500) {
		froms := make(map[int64]int64, len(part))
		for _, id := range part {
			froms[int64(id)] = at[int64(id)]
		}
		readFrom, err := dec.begin(froms, last, minutes)
		if err != nil {
			return nil, err
		}
		sq, args := inList(`SELECT series_id, resolution, start_time, end_time, duration, process_id, shape_id, data FROM prof_blocks
			WHERE `+atResolutions+` AND start_time >= ? AND start_time <= ? AND series_id IN `, part, readFrom, last)
		err = ps.b.each(ctx, sq+` ORDER BY start_time`, args, func(rows *sql.Rows) error {
			var series, resolution, start, end, duration, processID, shapeID int64
			var data []byte
			if err := rows.Scan(&series, &resolution, &start, &end, &duration, &processID, &shapeID, &data); err != nil {
				return err
			}
			switch t := at[series]; {
			case dec.ignored(series, start):
				return nil // its chain resumed after it
			case start < t:
				return dec.skip(series, resolution, start, data)
			case start > t:
				return nil // after its instant
			}
			shape, err := ps.shape(ctx, shapeID)
			if err != nil {
				return err
			}
			samples, err := dec.samples(series, resolution, start, data)
			if err != nil {
				return err
			}
			return m.Add(profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape,
				Processes: []profseries.TargetProcess{{Target: labels[series], Process: processes[processID]}}, Samples: samples})
		})
		if err != nil {
			return nil, fmt.Errorf("read profile blocks: %w", err)
		}
	}
	return &m, nil
}
