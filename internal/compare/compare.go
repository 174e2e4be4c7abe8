package compare

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// RunKeys returns the configuration keys perfscope writes to identify a
// run rather than its conditions. They differ between any two runs, so
// Compare ignores them by default; otherwise every input would be its own
// table. benchstat needs "-ignore commit,branch,dirty" for the same effect.
func RunKeys() []string { return []string{"commit", "branch", "dirty"} }

// Options configure how results are grouped, paired and tested. The zero
// value means benchstat's defaults plus ignoring RunKeys.
type Options struct {
	// Table, Row and Col are benchproc projections, as benchstat's
	// -table, -row and -col. Defaults: ".config", ".fullname", ".file";
	// a blank string (" ") projects nothing, as benchstat's -table "".
	Table, Row, Col string
	// Ignore lists keys whose variation is ignored when grouping, as
	// benchstat's -ignore.
	Ignore []string
	// KeepRunKeys turns off the default ignoring of RunKeys.
	KeepRunKeys bool
	// Filter is a benchproc filter query, as benchstat's -filter.
	// Default "*".
	Filter string
	// Renames pair benchmarks renamed between inputs: each result whose
	// name is Old (or starts with Old followed by "/" or "-") is
	// renamed to New before grouping.
	Renames []Rename
	// Alpha is the significance level of the U-test. Default 0.05.
	Alpha float64
	// Confidence is the confidence level of the intervals. Default 0.95.
	Confidence float64
}

// A Rename maps an old benchmark name to the new one it was renamed to.
// Names are given without the "Benchmark" prefix (which is stripped if
// present).
type Rename struct{ Old, New string }

// ParseRename parses "old=new".
func ParseRename(s string) (Rename, error) {
	o, n, ok := strings.Cut(s, "=")
	o, n = strings.TrimPrefix(o, "Benchmark"), strings.TrimPrefix(n, "Benchmark")
	if !ok || o == "" || n == "" {
		return Rename{}, fmt.Errorf("rename %q: want old=new", s)
	}
	return Rename{o, n}, nil
}

func (o Options) withDefaults() Options {
	if o.Table == "" {
		o.Table = ".config"
	}
	if o.Row == "" {
		o.Row = ".fullname"
	}
	if o.Col == "" {
		o.Col = ".file"
	}
	if o.Filter == "" {
		o.Filter = "*"
	}
	if o.Alpha == 0 {
		o.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	return o
}

// A Comparison is the result of comparing benchmark inputs: one Table per
// unit and configuration, each comparing every column to the first.
type Comparison struct {
	// Tables in benchstat's order.
	Tables []*Table
	// Warnings about the inputs: malformed lines that were skipped and
	// results a filter rejected with a reason.
	Warnings []error
	// Options are the options the comparison was made with, defaults
	// filled in.
	Options Options
}

// A spacedValue is a file configuration value with its runs of white space
// reduced to single spaces.
type spacedValue struct{ key, value string }

// unifySpacing gives each file configuration value the spelling it first
// had among all inputs when the two differ only in white space: "go test"
// pads its cpu line, and a stored commit keeps the model without padding,
// yet both name the same machine and must share a table. Inputs spelled
// alike are left as they are, so output stays benchstat's byte for byte.
func unifySpacing(res *benchfmt.Result, first map[spacedValue][]byte) {
	for i := range res.Config {
		c := &res.Config[i]
		if !c.File {
			continue
		}
		k := spacedValue{c.Key, strings.Join(strings.Fields(string(c.Value)), " ")}
		if v, ok := first[k]; ok {
			c.Value = v
		} else {
			first[k] = c.Value
		}
	}
}

// Compare groups the results of inputs into tables and computes medians,
// confidence intervals, U-test p-values and geomeans exactly as benchstat.
// An error means the options could not be understood; problems with the
// data itself are warnings in the Comparison.
func Compare(inputs []*Input, opts Options) (*Comparison, error) {
	opts = opts.withDefaults()
	if opts.Alpha < 0 || opts.Alpha > 1 {
		return nil, errors.New("alpha must be in range [0, 1]")
	}
	if opts.Confidence < 0 || opts.Confidence > 1 {
		return nil, errors.New("confidence must be in range [0, 1]")
	}
	filter, err := benchproc.NewFilter(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("parse filter: %w", err)
	}
	var parser benchproc.ProjectionParser
	tableBy, _, err := parser.ParseWithUnit(opts.Table, filter)
	if err != nil {
		return nil, fmt.Errorf("parse table projection: %w", err)
	}
	rowBy, err := parser.Parse(opts.Row, filter)
	if err != nil {
		return nil, fmt.Errorf("parse row projection: %w", err)
	}
	colBy, err := parser.Parse(opts.Col, filter)
	if err != nil {
		return nil, fmt.Errorf("parse column projection: %w", err)
	}
	ignore := opts.Ignore
	if !opts.KeepRunKeys {
		ignore = append(append([]string(nil), ignore...), RunKeys()...)
	}
	if len(ignore) > 0 {
		if _, err := parser.Parse(strings.Join(ignore, ","), filter); err != nil {
			return nil, fmt.Errorf("parse ignored keys: %w", err)
		}
	}
	b := newBuilder(tableBy, rowBy, colBy, parser.Residue())

	cmp := &Comparison{Options: opts}
	units := make(benchfmt.UnitMetadataMap)
	spelling := make(map[spacedValue][]byte)
	for _, in := range inputs {
		cmp.Warnings = append(cmp.Warnings, in.Warnings...)
		for k, u := range in.Units {
			if _, ok := units[k]; !ok {
				units[k] = u
			}
		}
		for _, res := range in.Results {
			// Filters rewrite Values and renames rewrite Name:
			// work on a copy so an Input can be compared twice.
			res = res.Clone()
			unifySpacing(res, spelling)
			applyRenames(res, opts.Renames)
			if ok, err := filter.Apply(res); !ok {
				if err != nil {
					cmp.Warnings = append(cmp.Warnings, err)
				}
				continue
			}
			b.add(res)
		}
	}
	thresholds := benchmath.DefaultThresholds
	thresholds.CompareAlpha = opts.Alpha
	cmp.Tables = b.tables(&thresholds, units, opts.Confidence)
	return cmp, nil
}

func applyRenames(res *benchfmt.Result, renames []Rename) {
	name := res.Name.String()
	for _, r := range renames {
		if name == r.Old || strings.HasPrefix(name, r.Old) && strings.ContainsRune("/-", rune(name[len(r.Old)])) {
			res.Name = benchfmt.Name(r.New + name[len(r.Old):])
			return
		}
	}
}

// A builder collects results into cells of tables, as benchstat's.
type builder struct {
	tableBy, rowBy, colBy, residue *benchproc.Projection
	unitField                      *benchproc.Field
	byKey                          map[benchproc.Key]*builderTable
}

type builderTable struct {
	rows, cols map[benchproc.Key]struct{}
	cells      map[cellKey]*builderCell
}

type cellKey struct{ row, col benchproc.Key }

type builderCell struct {
	values  []float64
	residue map[benchproc.Key]struct{}
}

func newBuilder(tableBy, rowBy, colBy, residue *benchproc.Projection) *builder {
	fields := tableBy.Fields()
	return &builder{
		tableBy: tableBy, rowBy: rowBy, colBy: colBy, residue: residue,
		unitField: fields[len(fields)-1],
		byKey:     make(map[benchproc.Key]*builderTable),
	}
}

func (b *builder) add(res *benchfmt.Result) {
	tableKeys := b.tableBy.ProjectValues(res)
	ck := cellKey{b.rowBy.Project(res), b.colBy.Project(res)}
	residue := b.residue.Project(res)
	for i, tk := range tableKeys {
		t := b.byKey[tk]
		if t == nil {
			t = &builderTable{
				rows:  make(map[benchproc.Key]struct{}),
				cols:  make(map[benchproc.Key]struct{}),
				cells: make(map[cellKey]*builderCell),
			}
			b.byKey[tk] = t
		}
		c := t.cells[ck]
		if c == nil {
			c = &builderCell{residue: make(map[benchproc.Key]struct{})}
			t.cells[ck] = c
			t.rows[ck.row] = struct{}{}
			t.cols[ck.col] = struct{}{}
		}
		c.values = append(c.values, res.Values[i].Value)
		c.residue[residue] = struct{}{}
	}
}

func sortedKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

func (b *builder) tables(th *benchmath.Thresholds, units benchfmt.UnitMetadataMap, confidence float64) []*Table {
	var out []*Table
	for _, key := range sortedKeys(b.byKey) {
		bt := b.byKey[key]
		unit := key.Get(b.unitField)
		t := &Table{
			Key:        key,
			Unit:       unit,
			Assumption: units.GetAssumption(unit),
			Rows:       sortedKeys(bt.rows),
			Cols:       sortedKeys(bt.cols),
			Cells:      make(map[cellKey]*Cell),
			Alpha:      th.CompareAlpha,
			Confidence: confidence,
		}
		for k, bc := range bt.cells {
			// NewSample sorts in place; keep the builder's
			// values in observation order for Cell.Values.
			values := append([]float64(nil), bc.values...)
			t.Cells[k] = &Cell{Values: bc.values, Sample: benchmath.NewSample(values, th)}
		}
		base := t.Cols[0]
		for k, bc := range bt.cells {
			c := t.Cells[k]
			if k.col != base {
				c.Baseline = t.Cells[cellKey{k.row, base}]
			}
			c.Summary = t.Assumption.Summary(c.Sample, confidence)
			if c.Baseline != nil {
				c.Comparison = t.Assumption.Compare(c.Baseline.Sample, c.Sample)
			}
			if nsk := benchproc.NonSingularFields(sortedKeys(bc.residue)); len(nsk) > 0 {
				names := make([]string, len(nsk))
				for i, f := range nsk {
					names[i] = f.Name
				}
				c.Sample.Warnings = append(c.Sample.Warnings, errors.New("benchmarks vary in "+strings.Join(names, ", ")))
			}
		}
		t.summarize()
		out = append(out, t)
	}
	return out
}

// summarize computes the geomean row. Like benchstat it takes the geomean
// of per-row ratios rather than the ratio of geomeans, which stays
// meaningful when the benchmark sets differ.
func (t *Table) summarize() {
	t.Geomeans = make([]*Geomean, len(t.Cols))
	nBase := 0
	for _, row := range t.Rows {
		if _, ok := t.Cells[cellKey{row, t.Cols[0]}]; ok {
			nBase++
		}
	}
	for i, col := range t.Cols {
		g := &Geomean{}
		t.Geomeans[i] = g
		var centers, ratios []float64
		badRatio := false
		for _, row := range t.Rows {
			c, ok := t.Cells[cellKey{row, col}]
			if !ok {
				continue
			}
			centers = append(centers, c.Summary.Center)
			if c.Baseline == nil {
				continue
			}
			a, b := c.Summary.Center, c.Baseline.Summary.Center
			switch {
			case a == b:
				ratios = append(ratios, 1) // 0/0 counts as no change
			case b == 0:
				badRatio = true
				ratios = append(ratios, 0) // keeps the count below right
			default:
				ratios = append(ratios, a/b)
			}
		}
		if i > 0 && nBase != len(ratios) {
			g.Warnings = append(g.Warnings, errors.New("benchmark set differs from baseline; geomeans may not be comparable"))
		}
		if gm := stats.GeoMean(centers); math.IsNaN(gm) {
			g.Warnings = append(g.Warnings, errors.New("summaries must be >0 to compute geomean"))
		} else {
			g.HasCenter, g.Center = true, gm
		}
		if i > 0 && !badRatio {
			if gm := stats.GeoMean(ratios); math.IsNaN(gm) {
				g.Warnings = append(g.Warnings, errors.New("ratios must be >0 to compute geomean"))
			} else {
				g.HasRatio, g.Ratio = true, gm
			}
		}
	}
}
