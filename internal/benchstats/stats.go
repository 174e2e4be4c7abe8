package benchstats

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/perfscope/perfscope/internal/measure"
)

// rowJob is one row still to be summarized: its cells' values in column
// order (nil where a column lacks the row) and the row's Cells to fill.
type rowJob struct {
	table      *Table
	assumption benchmath.Assumption
	values     []*cellValues
	row        *Row
}

// tables lays the grouped cells out as tables in benchstat's order, then
// summarizes and tests every row. Rows are independent (a cell is only
// ever compared with the base cell of its own row), so they are spread
// over a bounded number of workers; each table's geomeans follow once its
// rows are done.
func (g *grouping) tables(ctx context.Context, th *benchmath.Thresholds, units benchfmt.UnitMetadataMap, opts Options) ([]*Table, error) {
	var out []*Table
	var jobs []rowJob
	for _, key := range sortedKeys(g.byKey) {
		tc := g.byKey[key]
		unit := key.Get(g.unitField)
		// The inputs' Unit lines, else perfscope's own units' metadata:
		// the same answer the gate and history get.
		assumption := measure.Assumption(unit, units)
		cols := sortedKeys(tc.cols)
		t := &Table{
			Config:     keyValues(key),
			Unit:       unit,
			Center:     assumption.SummaryLabel(),
			Alpha:      th.CompareAlpha,
			Confidence: opts.Confidence,
		}
		for _, col := range cols {
			t.Columns = append(t.Columns, Column{Label: col.StringValues(), Fields: keyValues(col)})
		}
		for _, rk := range sortedKeys(tc.rows) {
			row := &Row{Name: rk.StringValues(), Cells: make([]*Cell, len(cols))}
			values := make([]*cellValues, len(cols))
			for i, col := range cols {
				values[i] = tc.cells[cellKey{rk, col}]
			}
			t.Rows = append(t.Rows, row)
			jobs = append(jobs, rowJob{t, assumption, values, row})
		}
		out = append(out, t)
	}
	// The jobs hold every cell's values; the maps that found them would
	// only give the collector more to scan while the tests run.
	g.byKey = nil

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				summarizeRow(jobs[i], th)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, t := range out {
		t.Geomeans = geomeans(t)
	}
	return out, nil
}

// summarizeRow fills a row's cells: each sample's summary and warnings,
// then each cell's test against the base column's cell of the row.
func summarizeRow(j rowJob, th *benchmath.Thresholds) {
	a := j.assumption
	samples := make([]*benchmath.Sample, len(j.values))
	for i, cv := range j.values {
		if cv == nil {
			continue
		}
		// NewSample sorts in place; Values keep the order read.
		samples[i] = benchmath.NewSample(slices.Clone(cv.values), th)
		c := &Cell{Values: cv.values, Summary: a.Summary(samples[i], j.table.Confidence)}
		c.Warnings = append(c.Warnings, samples[i].Warnings...)
		if vary := varyingKeys(cv.residues); vary != nil {
			c.Warnings = append(c.Warnings, vary)
		}
		c.Warnings = append(c.Warnings, c.Summary.Warnings...)
		j.row.Cells[i] = c
	}
	base := j.row.Cells[0]
	if base == nil {
		return
	}
	for i := 1; i < len(samples); i++ {
		c := j.row.Cells[i]
		if c == nil {
			continue
		}
		t := a.Compare(samples[0], samples[i])
		c.Change = &Change{
			Base:        base,
			Test:        t,
			Delta:       t.FormatDelta(base.Summary.Center, c.Summary.Center),
			Significant: t.P <= t.Alpha,
			Ratio:       c.Summary.Center / base.Summary.Center,
		}
	}
}

// varyingKeys warns when a cell mixes results that differ in keys no
// projection accounts for, such as two packages' benchmarks of one name.
func varyingKeys(residues []benchproc.Key) error {
	if len(residues) < 2 {
		return nil
	}
	residues = slices.Clone(residues)
	benchproc.SortKeys(residues)
	fields := benchproc.NonSingularFields(residues)
	if len(fields) == 0 {
		return nil
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return errors.New("benchmarks vary in " + strings.Join(names, ", "))
}

// geomeans summarizes each column of t.
func geomeans(t *Table) []*Geomean {
	inBase := 0
	for _, r := range t.Rows {
		if r.Cells[0] != nil {
			inBase++
		}
	}
	out := make([]*Geomean, len(t.Columns))
	for i := range t.Columns {
		var centers []float64
		var pairs [][2]float64 // head and base centers of compared rows
		for _, r := range t.Rows {
			if c := r.Cells[i]; c != nil {
				centers = append(centers, c.Summary.Center)
				if c.Change != nil {
					pairs = append(pairs, [2]float64{c.Summary.Center, c.Change.Base.Summary.Center})
				}
			}
		}
		g := &Geomean{}
		if i > 0 && len(pairs) != inBase {
			g.Warnings = append(g.Warnings, errors.New("benchmark set differs from baseline; geomeans may not be comparable"))
		}
		g.Center, g.HasCenter = positiveGeomean(centers)
		if !g.HasCenter {
			g.Warnings = append(g.Warnings, errors.New("summaries must be >0 to compute geomean"))
		}
		if i > 0 {
			ratios, defined := rowRatios(pairs)
			if defined {
				g.Ratio, g.HasRatio = positiveGeomean(ratios)
				if !g.HasRatio {
					g.Warnings = append(g.Warnings, errors.New("ratios must be >0 to compute geomean"))
				}
			}
		}
		out[i] = g
	}
	return out
}

// positiveGeomean returns the geometric mean of xs, which is defined only
// when every x is positive.
func positiveGeomean(xs []float64) (float64, bool) {
	gm := stats.GeoMean(xs)
	return gm, !math.IsNaN(gm)
}

// rowRatios returns each row's ratio of centers, head over base. Equal
// centers (zeros included) are no change, a ratio of 1; a zero base under a
// non-zero head leaves the column without a ratio.
func rowRatios(pairs [][2]float64) (ratios []float64, defined bool) {
	ratios = make([]float64, len(pairs))
	for i, p := range pairs {
		head, base := p[0], p[1]
		switch {
		case head == base:
			ratios[i] = 1
		case base == 0:
			return nil, false
		default:
			ratios[i] = head / base
		}
	}
	return ratios, true
}
