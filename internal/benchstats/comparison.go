package benchstats

import "golang.org/x/perf/benchmath"

// A Comparison is the result of comparing benchmark inputs: one Table per
// unit and configuration, each comparing every column with the first.
type Comparison struct {
	// Tables in benchstat's order.
	Tables []*Table
	// Warnings about the inputs: malformed lines that were skipped and
	// results a filter rejected with a reason, in the order read.
	Warnings []error
	// Options are the options the comparison was made with, defaults
	// filled in.
	Options Options
}

// A KeyValue is one configuration key and its value.
type KeyValue struct{ Key, Value string }

// A Table compares one unit across benchmarks (rows) and inputs (columns),
// as one benchstat table. Every cell is compared with the cell of the same
// row in the first column, the base.
type Table struct {
	// Config is the configuration the table's results share, in
	// projection order, without the unit.
	Config []KeyValue
	// Unit is the tidied unit of every value in the table ("sec/op").
	Unit string
	// Center names the summary statistic of the unit's distributional
	// assumption: "median", "mean" or "exact".
	Center string
	// Alpha and Confidence are the levels the table was computed at.
	Alpha, Confidence float64
	// Columns are the table's columns in display order.
	Columns []Column
	// Rows are the benchmarks in display order.
	Rows []*Row
	// Geomeans summarize each column, in Columns order.
	Geomeans []*Geomean
}

// A Column is one input, or one group of results when the column
// projection is not ".file".
type Column struct {
	// Label is the column's values joined ("old.txt").
	Label string
	// Fields are the column projection's keys with this column's
	// values, outermost first; a renderer groups adjacent columns that
	// share leading values.
	Fields []KeyValue
}

// A Row is one benchmark across the columns.
type Row struct {
	// Name is the row's label ("Encode/format=json-8").
	Name string
	// Cells holds one cell per column; nil where the column lacks the
	// benchmark.
	Cells []*Cell
}

// A Cell summarizes the sample of one benchmark in one column.
type Cell struct {
	// Values are the measurements in the order they were read.
	Values []float64
	// Summary is the center (median) and its confidence interval.
	Summary benchmath.Summary
	// Warnings are those of the sample and of its summary, in the
	// order benchstat numbers its footnotes.
	Warnings []error
	// Change compares the cell with the base column's cell of its row;
	// nil in the base column and where the base lacks the row.
	Change *Change
}

// A Change is a cell's comparison with its base.
type Change struct {
	// Base is the cell compared with.
	Base *Cell
	// Test is the result of the assumption's test: p-value, sample
	// sizes, alpha and warnings.
	Test benchmath.Comparison
	// Delta is benchstat's "vs base" verdict: "~" when the difference
	// is not significant at alpha, else the signed percent change
	// ("+3.10%").
	Delta string
	// Significant reports whether the difference is significant at
	// alpha.
	Significant bool
	// Ratio is the cell's center over the base's; ±Inf or NaN when the
	// base's center is zero.
	Ratio float64
}

// A Geomean summarizes one column of a table: the geometric mean of its
// centers and, for compared columns, of the ratios of each row's center to
// its base's. Like benchstat it takes the geomean of per-row ratios rather
// than the ratio of geomeans, which stays meaningful when the benchmark
// sets differ.
type Geomean struct {
	HasCenter bool
	Center    float64
	HasRatio  bool
	Ratio     float64
	Warnings  []error
}
