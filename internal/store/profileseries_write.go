package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// maxAppendBatch bounds the scrapes one transaction stores.
const maxAppendBatch = 256

// An appendQueue holds the scrapes given to Append and not yet taken by
// the writer; running says a writer goroutine is draining it.
type appendQueue struct {
	mu      sync.Mutex
	pending []*appendReq
	running bool
}

// An appendReq is one Append waiting for its scrape to be stored.
type appendReq struct {
	ctx  context.Context
	s    *profseries.Scrape
	done chan error // receives the outcome, once
}

// Append stores one scrape, all of it or nothing, and returns once it is
// committed: a crash loses at most the scrapes in flight, none that
// Append returned nil for. Storing a scrape of the same series, start and
// process again stores nothing.
//
// Appends called at once (a scraper's targets finishing together) are
// committed together: one writer takes every scrape waiting, up to
// maxAppendBatch, into one transaction, so a disk that commits a hundred
// transactions a second stores many more scrapes than that. When that
// transaction fails, each of its scrapes is stored again in a transaction
// of its own, so that one bad scrape fails alone. A scrape whose ctx is
// done before the writer takes it is not stored; once taken, it is
// committed or fails whatever its ctx does, and Append waits for that.
func (ps *ProfileSeries) Append(ctx context.Context, s *profseries.Scrape) error {
	if err := checkScrape(s); err != nil {
		return fmt.Errorf("store scrape: %w", err)
	}
	if err := ps.ensurePartition(ctx, s.Start); err != nil {
		return fmt.Errorf("store scrape: %w", err)
	}
	r := &appendReq{ctx: ctx, s: s, done: make(chan error, 1)}
	q := &ps.queue
	q.mu.Lock()
	q.pending = append(q.pending, r)
	if !q.running {
		q.running = true
		go ps.drain()
	}
	q.mu.Unlock()
	return <-r.done
}

// drain stores the waiting scrapes, a batch at a time, until none waits.
func (ps *ProfileSeries) drain() {
	q := &ps.queue
	for {
		q.mu.Lock()
		n := min(len(q.pending), maxAppendBatch)
		if n == 0 {
			q.running = false
			q.pending = nil // let a burst's backing array go
			q.mu.Unlock()
			return
		}
		batch := make([]*appendReq, n)
		copy(batch, q.pending)
		q.pending = append(q.pending[:0], q.pending[n:]...)
		q.mu.Unlock()
		ps.commit(batch)
	}
}

// commit stores batch in one transaction, or, when that fails, each of
// its scrapes in its own; every request gets its outcome.
func (ps *ProfileSeries) commit(batch []*appendReq) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- fmt.Errorf("store scrape of %s %s: %w", r.s.Type, r.s.Target, err)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	// The transaction outlives any one caller's ctx: each waits for it.
	ctx := context.WithoutCancel(live[0].ctx)
	// One transaction at a time per process: the symbol cache is shared,
	// and SQLite writes one at a time anyway.
	ps.mu.Lock()
	defer ps.mu.Unlock()
	err := ps.appendTx(ctx, live)
	if err == nil {
		for _, r := range live {
			r.done <- nil
		}
		return
	}
	ps.cache.reset(-1) // ids learnt in a rolled back transaction are not stored
	if len(live) > 1 {
		for _, r := range live {
			err := ps.appendTx(ctx, []*appendReq{r})
			if err != nil {
				ps.cache.reset(-1)
			}
			r.done <- wrapAppendErr(r.s, err)
		}
		return
	}
	live[0].done <- wrapAppendErr(live[0].s, err)
}

func wrapAppendErr(s *profseries.Scrape, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store scrape of %s %s: %w", s.Type, s.Target, err)
}

// appendTx stores the scrapes of rs in one transaction; ps.mu held.
func (ps *ProfileSeries) appendTx(ctx context.Context, rs []*appendReq) error {
	tx, err := ps.b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := ps.lock(ctx, tx, false); err != nil {
		return err
	}
	if err := ps.checkEpoch(ctx, tx); err != nil {
		return err
	}
	clear(ps.cache.pending)
	starts := make([]int64, 0, len(rs))
	for _, r := range rs {
		if err := ps.appendScrape(ctx, tx, r.s); err != nil {
			if len(rs) > 1 {
				err = fmt.Errorf("%s %s: %w", r.s.Type, r.s.Target, err)
			}
			return err
		}
		starts = append(starts, nanos(r.s.Start))
	}
	if err := ps.noteStored(ctx, tx, starts, time.Now().UnixNano()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for id, l := range ps.cache.pending {
		ps.cache.last[id] = l
	}
	clear(ps.cache.pending)
	return nil
}

// appendScrape writes one scrape in tx: its series, process, symbols and
// block, and a snapshot's levels beside it (see Levels).
func (ps *ProfileSeries) appendScrape(ctx context.Context, tx *sql.Tx, s *profseries.Scrape) error {
	seriesID, err := ps.seriesID(ctx, tx, s.Target, s.Type)
	if err != nil {
		return err
	}
	processID, err := ps.processID(ctx, tx, s.Process)
	if err != nil {
		return err
	}
	t := &txSymbols{ctx: ctx, tx: tx, ps: ps, seen: nanos(s.Start)}
	shapeID, samples, err := profseries.Intern(s.Profile, t)
	if err != nil {
		return err
	}
	if err := t.touch(); err != nil {
		return err
	}
	start := nanos(s.Start)
	var block []byte
	base, late := ps.base(seriesID, start, processID, int64(shapeID))
	if late {
		block, err = ps.codec().EncodeAside(samples, len(s.Profile.SampleType), s.Profile.Period)
	} else {
		block, err = ps.codec().EncodeAgainst(samples, len(s.Profile.SampleType), s.Profile.Period, base)
	}
	if err != nil {
		return err
	}
	l := profseries.EncodeScrapeLevels(s, samples)
	var levels any // NULL where none are kept
	if l != nil {
		levels = l
	}
	res, err := tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_blocks
		(series_id, resolution, start_time, end_time, duration, process_id, shape_id, samples, raw_bytes, data, levels)
		VALUES (?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
		seriesID, start, nanos(s.End), int64(s.End.Sub(s.Start)), processID, int64(shapeID), len(samples), s.RawBytes, block, levels)
	if err != nil {
		return fmt.Errorf("insert block: %w", err)
	}
	stored, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("insert block: %w", err)
	}
	if stored == 1 {
		if err := ps.record(ctx, tx, seriesID, processID, int64(shapeID), s, samples, block, l); err != nil {
			return err
		}
	}
	if s.Requests != nil {
		routes, err := json.Marshal(s.Requests.Routes)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_requests (series_id, start_time, process_id, total, span, routes)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`), seriesID, nanos(s.Start), processID, s.Requests.Total, int64(s.Requests.Span), string(routes)); err != nil {
			return fmt.Errorf("insert request counts: %w", err)
		}
	}
	if stored == 1 && !late && profseries.Chained(s.Type) {
		ps.cache.pending[seriesID] = lastBlock{start: start, process: processID, shape: int64(shapeID), samples: samples}
	}
	return nil
}

// base returns the samples of the block a series' block starting at start
// is coded against (see profseries.EncodeAgainst): the last this process
// stored of the series, when it is of the same process and shape, earlier,
// and in the same span. Every span's first block is coded alone, so a
// reader decodes any block from the start of its span, and retention,
// which cuts scrapes by whole spans, never leaves a block without the one
// it is coded against. nil when there is none; late when the block starts
// before that last block, and so is to be coded aside (a reader in order
// of time meets it between the last block and the next, coded against
// the last).
func (ps *ProfileSeries) base(series, start, process, shape int64) (base []profseries.Sample, late bool) {
	l, ok := ps.cache.pending[series]
	if !ok {
		l, ok = ps.cache.last[series]
	}
	switch {
	case !ok:
		return nil, false
	case start <= l.start:
		return nil, true
	case l.process != process || l.shape != shape || ps.chainStart(l.start) != ps.chainStart(start):
		return nil, false
	}
	return l.samples, false
}

// chainSpan is the span whose first block of a series is coded alone: a
// reader of a block reads its series from the start of its span, so a
// read from within a span decodes at most a span of blocks before it. A
// store made before migration 15 coded its chains an hour long; it
// starts ten-minute chains at chains_from (prof_meta), the hour after its
// newest scrape then, and reads the blocks before as hour-long chains.
const chainSpan = int64(10 * time.Minute)

// packSpan is the span of a series' blocks one pack holds (see
// profileseries_pack.go): an hour, a whole number of chains.
const packSpan = int64(time.Hour)

// chainStart is where the chain of the block starting at t starts.
func (ps *ProfileSeries) chainStart(t int64) int64 {
	if t >= ps.chainsFrom {
		return floorTo(t, chainSpan)
	}
	return floorTo(t, packSpan)
}
