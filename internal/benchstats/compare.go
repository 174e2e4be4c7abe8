package benchstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Compare streams the results of inputs into the cells of tables, then
// computes medians, confidence intervals, U-test p-values and geomeans
// exactly as benchstat, spreading the cells over Options.Workers. An error
// means the options could not be understood or an input could not be
// read; problems with the data itself are warnings in the Comparison.
func Compare(ctx context.Context, inputs []*Input, opts Options) (*Comparison, error) {
	opts = opts.withDefaults()
	if opts.Alpha < 0 || opts.Alpha > 1 {
		return nil, &OptionsError{errors.New("alpha must be in range [0, 1]")}
	}
	if opts.Confidence < 0 || opts.Confidence > 1 {
		return nil, &OptionsError{errors.New("confidence must be in range [0, 1]")}
	}
	g, err := newGrouping(opts)
	if err != nil {
		return nil, &OptionsError{err}
	}
	cmp := &Comparison{Options: opts}
	units := make(benchfmt.UnitMetadataMap)
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Within an input the last Unit line for a unit counts; across
		// inputs the first input that describes a unit does.
		own := make(benchfmt.UnitMetadataMap)
		err := in.Read(ctx, func(rec benchfmt.Record) {
			switch rec := rec.(type) {
			case *benchfmt.SyntaxError:
				cmp.Warnings = append(cmp.Warnings, rec)
			case *benchfmt.UnitMetadata:
				u := *rec
				own[u.UnitMetadataKey] = &u
			case *benchfmt.Result:
				if err := g.add(rec, in.Label); err != nil {
					cmp.Warnings = append(cmp.Warnings, err)
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", in.Label, err)
		}
		for k, u := range own {
			if _, ok := units[k]; !ok {
				units[k] = u
			}
		}
	}
	th := benchmath.DefaultThresholds
	th.CompareAlpha = opts.Alpha
	cmp.Tables, err = g.tables(ctx, &th, units, opts)
	if err != nil {
		return nil, err
	}
	return cmp, nil
}

// An OptionsError is returned by Compare for Options it cannot use, such
// as a projection or filter that does not parse; it is the user's to fix.
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }
func (e *OptionsError) Unwrap() error { return e.Err }

// A grouping collects each result's values into the cells of tables as
// it is read, keeping nothing else of the result.
type grouping struct {
	filter                         *benchproc.Filter
	tableBy, rowBy, colBy, residue *benchproc.Projection
	unitField                      *benchproc.Field
	renames                        []Rename
	spacing                        spacing
	prev                           projected
	byKey                          map[benchproc.Key]*tableCells
}

// projected remembers the keys of the last result projected. A benchmark's
// samples come one after another and differ only in their values, so most
// results reuse the keys of the one before instead of projecting again.
type projected struct {
	valid   bool
	name    []byte
	config  []benchfmt.Config
	units   []string
	tables  []benchproc.Key
	cell    cellKey
	residue benchproc.Key
}

// same reports whether res has the name, configuration and units of the
// result the keys were projected from.
func (p *projected) same(res *benchfmt.Result) bool {
	if !p.valid || !bytes.Equal(p.name, res.Name) || len(p.config) != len(res.Config) || len(p.units) != len(res.Values) {
		return false
	}
	for i, c := range res.Config {
		if p.config[i].Key != c.Key || p.config[i].File != c.File || !bytes.Equal(p.config[i].Value, c.Value) {
			return false
		}
	}
	for i, v := range res.Values {
		if p.units[i] != v.Unit {
			return false
		}
	}
	return true
}

// set remembers res and its keys, copying what the reader will reuse.
func (p *projected) set(res *benchfmt.Result, tables []benchproc.Key, cell cellKey, residue benchproc.Key) {
	p.valid = true
	p.name = append(p.name[:0], res.Name...)
	p.config = p.config[:0]
	for _, c := range res.Config {
		p.config = append(p.config, benchfmt.Config{Key: c.Key, Value: bytes.Clone(c.Value), File: c.File})
	}
	p.units = p.units[:0]
	for _, v := range res.Values {
		p.units = append(p.units, v.Unit)
	}
	p.tables, p.cell, p.residue = tables, cell, residue
}

// tableCells are the cells of one table while results are read.
type tableCells struct {
	rows, cols map[benchproc.Key]struct{}
	cells      map[cellKey]*cellValues
}

type cellKey struct{ row, col benchproc.Key }

// cellValues are one cell's measurements and the distinct residue keys of
// the results that gave them (almost always one).
type cellValues struct {
	values   []float64
	residues []benchproc.Key
}

func newGrouping(opts Options) (*grouping, error) {
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
	if ignore := opts.ignored(); len(ignore) > 0 {
		// Parsing the ignored keys as a projection takes them out of
		// the residue, which is what ignoring them means.
		if _, err := parser.Parse(strings.Join(ignore, ","), filter); err != nil {
			return nil, fmt.Errorf("parse ignored keys: %w", err)
		}
	}
	fields := tableBy.Fields()
	return &grouping{
		filter: filter, tableBy: tableBy, rowBy: rowBy, colBy: colBy, residue: parser.Residue(),
		unitField: fields[len(fields)-1],
		renames:   opts.Renames,
		spacing:   newSpacing(),
		byKey:     make(map[benchproc.Key]*tableCells),
	}, nil
}

// add files res, read from the input labelled label, into its cells. res
// is changed in place and not kept. The error is the filter's reason for
// rejecting res, if it gave one.
func (g *grouping) add(res *benchfmt.Result, label string) error {
	res.SetConfig(".file", label)
	g.spacing.unify(res)
	if len(g.renames) > 0 {
		if name, ok := applyRenames(res.Name.String(), g.renames); ok {
			res.Name = benchfmt.Name(name)
		}
	}
	if ok, err := g.filter.Apply(res); !ok {
		return err
	}
	if !g.prev.same(res) {
		g.prev.set(res, g.tableBy.ProjectValues(res), cellKey{g.rowBy.Project(res), g.colBy.Project(res)}, g.residue.Project(res))
	}
	tableKeys, ck, residue := g.prev.tables, g.prev.cell, g.prev.residue
	for i, tk := range tableKeys {
		t := g.byKey[tk]
		if t == nil {
			t = &tableCells{
				rows:  make(map[benchproc.Key]struct{}),
				cols:  make(map[benchproc.Key]struct{}),
				cells: make(map[cellKey]*cellValues),
			}
			g.byKey[tk] = t
		}
		c := t.cells[ck]
		if c == nil {
			c = &cellValues{residues: []benchproc.Key{residue}}
			t.cells[ck] = c
			t.rows[ck.row] = struct{}{}
			t.cols[ck.col] = struct{}{}
		} else if !containsKey(c.residues, residue) {
			c.residues = append(c.residues, residue)
		}
		c.values = append(c.values, res.Values[i].Value)
	}
	return nil
}

func containsKey(keys []benchproc.Key, k benchproc.Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

// keyValues lists the fields of k's projection with k's values, leaving out
// the unit.
func keyValues(k benchproc.Key) []KeyValue {
	var kv []KeyValue
	for _, f := range k.Projection().FlattenedFields() {
		if f.Name != ".unit" {
			kv = append(kv, KeyValue{f.Name, k.Get(f)})
		}
	}
	return kv
}
