package bench

import (
	"fmt"
	"io"
	"math"

	"golang.org/x/perf/benchfmt"
)

// Results are benchmark results read from Go benchmark format, with the
// unit metadata and the malformed lines that were skipped.
type Results struct {
	Results []*benchfmt.Result
	Units   benchfmt.UnitMetadataMap
	// Warnings are *benchfmt.SyntaxError values naming file and line.
	Warnings []error
}

// Benchmarks counts the distinct benchmarks among the results: a
// benchmark is its package and full name, so BenchmarkA in two packages
// counts twice and its repeated samples once.
func (r *Results) Benchmarks() int {
	type key struct{ pkg, name string }
	seen := map[key]bool{}
	for _, res := range r.Results {
		seen[key{res.GetConfig("pkg"), string(res.Name)}] = true
	}
	return len(seen)
}

// Parse reads Go benchmark format from r. A malformed line is skipped and
// reported in Warnings, never fatal; the error is only for failed reads.
// name is used in messages. initConfig are key/value pairs set on every
// result before the file's own configuration, as benchfmt.Reader.Reset.
func Parse(r io.Reader, name string, initConfig ...string) (*Results, error) {
	out := &Results{Units: make(benchfmt.UnitMetadataMap)}
	err := Scan(r, name, func(rec benchfmt.Record) {
		switch rec := rec.(type) {
		case *benchfmt.SyntaxError:
			out.Warnings = append(out.Warnings, rec)
		case *benchfmt.Result:
			// The reader reuses its Result; keep a copy.
			out.Results = append(out.Results, rec.Clone())
		case *benchfmt.UnitMetadata:
			out.Units[rec.UnitMetadataKey] = rec
		}
	}, initConfig...)
	return out, err
}

// Scan reads Go benchmark format from r and passes each record to add as
// it is read: a *benchfmt.Result (reused by the next call, so add must
// copy what it keeps), a *benchfmt.UnitMetadata or a *benchfmt.SyntaxError
// for a malformed line, which never stops reading. A result with a
// negative iteration count or a NaN measurement (on which the U-test would
// never finish) is reported as a malformed line. name and initConfig are
// as in Parse.
func Scan(r io.Reader, name string, add func(benchfmt.Record), initConfig ...string) error {
	if len(initConfig)%2 != 0 {
		return fmt.Errorf("parse %s: initial configuration needs key/value pairs", name)
	}
	var rd benchfmt.Reader
	rd.Reset(r, name, initConfig...)
	for rd.Scan() {
		rec := rd.Result()
		if res, ok := rec.(*benchfmt.Result); ok {
			if msg := malformed(res); msg != "" {
				file, line := res.Pos()
				rec = &benchfmt.SyntaxError{FileName: file, Line: line, Msg: msg}
			}
		}
		add(rec)
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("read benchmark results: %w", err)
	}
	return nil
}

// malformed says what makes a result that benchfmt read unusable: a
// negative iteration count, or a NaN measurement.
func malformed(r *benchfmt.Result) string {
	if r.Iters < 0 {
		return fmt.Sprintf("iteration count %d is negative", r.Iters)
	}
	for _, v := range r.Values {
		if math.IsNaN(v.Value) {
			return "measurement in " + v.OrigUnit + " is not a number"
		}
	}
	return ""
}
