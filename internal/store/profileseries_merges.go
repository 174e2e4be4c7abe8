package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/perfscope/perfscope/internal/profseries"
)

// mergesKept bounds the merges of ranges kept (see mergeQuery): a page
// and the views it frames ask for the same few ranges, one after another.
const mergesKept = 8

// merges keeps the latest merges of ranges, each with the state of its
// series when it was read: a service page's top table, its findings and
// the flame graph it frames merge the same range, and a range is merged
// again only when its series changed.
type merges struct {
	mu   sync.Mutex
	kept []keptMerge // oldest first
	// running are the merges being read: a second read of a range
	// waits for the first (a page's parts read at once), whatever the
	// state each read: on a live store, a scrape stored between the two
	// (they come every few milliseconds from a fleet) would otherwise
	// have the range read twice at once, for a merge a few milliseconds
	// older.
	running []*runningMerge
}

// A runningMerge is a merge being read, as a keptMerge says it; done is
// closed once its window and err are set.
type runningMerge struct {
	keptMerge
	done    chan struct{}
	err     error
	waiting int // the callers that came while it was read
}

// of says k is a merge of q, at any state.
func (k *keptMerge) of(q profseries.Query) bool {
	return k.typ == q.Type && k.sel == q.Selector.String() && k.from == nanos(q.From) && k.to == nanos(q.To)
}

// same says k is the merge of q at state.
func (k *keptMerge) same(q profseries.Query, state []int64) bool {
	return k.of(q) && slices.Equal(k.state, state)
}

// run returns the merge of q that read makes, at state, or that of the
// read of q under way, reading it once for every caller that asks while
// it is read.
func (m *merges) run(ctx context.Context, q profseries.Query, state []int64, read func() (profseries.Window, error)) (profseries.Window, error) {
	m.mu.Lock()
	for _, r := range m.running {
		if r.of(q) {
			r.waiting++
			m.mu.Unlock()
			select {
			case <-r.done:
				if isCanceled(r.err) && ctx.Err() == nil {
					return read() // the first reader's request ended, not this one
				}
				return r.w, r.err
			case <-ctx.Done():
				return profseries.Window{}, ctx.Err()
			}
		}
	}
	r := &runningMerge{keptMerge: keptMerge{typ: q.Type, sel: q.Selector.String(), from: nanos(q.From), to: nanos(q.To), state: state}, done: make(chan struct{})}
	m.running = append(m.running, r)
	m.mu.Unlock()
	r.w, r.err = read()
	m.mu.Lock()
	m.running = slices.DeleteFunc(m.running, func(o *runningMerge) bool { return o == r })
	m.mu.Unlock()
	close(r.done)
	return r.w, r.err
}

// isCanceled says err is a request's context ending.
func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// A keptMerge is one range merged: its query, the state of its series
// before the blocks were read (seriesState), and the merged window.
type keptMerge struct {
	typ, sel string
	from, to int64
	state    []int64
	w        profseries.Window
}

func (m *merges) get(q profseries.Query, state []int64) (profseries.Window, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.kept {
		if k.same(q, state) {
			return k.w, true
		}
	}
	return profseries.Window{}, false
}

func (m *merges) put(q profseries.Query, state []int64, w profseries.Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := keptMerge{typ: q.Type, sel: q.Selector.String(), from: nanos(q.From), to: nanos(q.To), state: state, w: w}
	m.kept = slices.DeleteFunc(m.kept, func(o keptMerge) bool {
		return o.typ == k.typ && o.sel == k.sel && o.from == k.from && o.to == k.to
	})
	if len(m.kept) >= mergesKept {
		m.kept = m.kept[1:]
	}
	m.kept = append(m.kept, k)
}

// seriesState is what the store says of series ids, which a merge of
// their blocks depends on: the collection epoch (a collection may give
// freed stack ids to other stacks) and each series' summary, which every
// change of its blocks updates in the same transaction (a scrape stored,
// however late, hours compacted, old blocks deleted). Equal states read
// equal merges. It is read before the blocks, so that a scrape stored in
// between makes the state older than the merge, never newer.
func (ps *ProfileSeries) seriesState(ctx context.Context, ids []uint64) ([]int64, error) {
	epoch, err := ps.epoch(ctx)
	if err != nil {
		return nil, err
	}
	state := []int64{epoch}
	for part := range chunks(ids, 500) {
		q, args := inList(`SELECT id, first_time, last_time, scrapes, blocks, bytes FROM prof_series WHERE id IN `, part)
		err := ps.b.each(ctx, q+` ORDER BY id`, args, func(rows *sql.Rows) error {
			var id, first, last, scrapes, blocks, bytes int64
			if err := rows.Scan(&id, &first, &last, &scrapes, &blocks, &bytes); err != nil {
				return err
			}
			state = append(state, id, first, last, scrapes, blocks, bytes)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read profile series' summaries: %w", err)
		}
	}
	return state, nil
}

// epoch reads the collection epoch (one row read): what a collection
// moves on, so that what a reader kept of ids it may have freed is not
// used again.
func (ps *ProfileSeries) epoch(ctx context.Context) (int64, error) {
	var epoch int64
	if err := ps.b.reader(ctx).QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'gc_epoch'`).Scan(&epoch); err != nil {
		return 0, fmt.Errorf("read collection epoch: %w", err)
	}
	ps.b.rowsRead.Add(1)
	return epoch, nil
}
