package benchstats

import (
	"fmt"
	"strings"

	"golang.org/x/perf/benchmath"
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
	// Workers bounds how many cells are summarized and tested at once.
	// Default GOMAXPROCS.
	Workers int
}

func (o Options) withDefaults() Options {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Table, ".config")
	def(&o.Row, ".fullname")
	def(&o.Col, ".file")
	def(&o.Filter, "*")
	if o.Alpha == 0 {
		o.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	return o
}

// ignored returns the keys whose variation grouping ignores.
func (o Options) ignored() []string {
	if o.KeepRunKeys {
		return o.Ignore
	}
	return append(append([]string(nil), o.Ignore...), RunKeys()...)
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

// apply returns the name renamed by the first matching rename.
func applyRenames(name string, renames []Rename) (string, bool) {
	for _, r := range renames {
		if name == r.Old || strings.HasPrefix(name, r.Old) && strings.ContainsRune("/-", rune(name[len(r.Old)])) {
			return r.New + name[len(r.Old):], true
		}
	}
	return "", false
}
