package measure

import (
	"os"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// readUnits reads a benchmark file as benchstat does: each unit's first value, tidied,
// and the metadata of its Unit lines.
func readUnits(t *testing.T, path string) (map[string]float64, benchfmt.UnitMetadataMap) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	values := make(map[string]float64)
	meta := make(benchfmt.UnitMetadataMap)
	r := benchfmt.NewReader(f, path)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			for _, v := range rec.Values {
				if _, ok := values[v.Unit]; !ok {
					values[v.Unit] = v.Value
				}
			}
		case *benchfmt.UnitMetadata:
			u := *rec
			meta[u.UnitMetadataKey] = &u
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return values, meta
}

// TestRules checks every rule on the units of real benchmark output, tidied
// as benchfmt reads them.
func TestRules(t *testing.T) {
	values, meta := readUnits(t, "testdata/units.txt")
	for _, tc := range []struct {
		unit   string
		better int
		exact  bool
		format string // the file's value, standing alone
		table  string // the file's value, in a table
	}{
		{"sec/op", -1, false, "31.1µs", "31.08µ"},
		{"cpu-sec/op", -1, false, "38.3µs", "38.35µ"},
		{"B/op", -1, false, "10.7 KiB", "10.70Ki"},
		{"allocs/op", -1, false, "88", "88.00"},
		{"B/s", 1, false, "4.8 GiB/s", "4.799Gi"},
		{"instructions/op", -1, true, "2,522", "2.522k"},
		{"hits/op", 1, false, "0.75", "750.0m"},
		{"widgets/op", 0, false, "3", "3.000"},
	} {
		v, ok := values[tc.unit]
		if !ok {
			t.Fatalf("%s: not in testdata/units.txt (have %v)", tc.unit, values)
		}
		if got := Better(tc.unit, meta); got != tc.better {
			t.Errorf("Better(%s) = %d, want %d", tc.unit, got, tc.better)
		}
		if got := Exact(tc.unit, meta); got != tc.exact {
			t.Errorf("Exact(%s) = %v, want %v", tc.unit, got, tc.exact)
		}
		if got := Format(v, tc.unit); got != tc.format {
			t.Errorf("Format(%v, %s) = %q, want %q", v, tc.unit, got, tc.format)
		}
		if got := TableValue(v, tc.unit); got != tc.table {
			t.Errorf("TableValue(%v, %s) = %q, want %q", v, tc.unit, got, tc.table)
		}
	}
}

// TestUntidiedUnits checks that a unit as a benchmark prints it and as
// benchfmt tidies it get the same answers.
func TestUntidiedUnits(t *testing.T) {
	for _, tc := range []struct {
		orig, tidy string
		v          float64 // in orig's unit
	}{
		{"ns/op", "sec/op", 7900},
		{"cpu-ns/op", "cpu-sec/op", 7900},
		{"MB/s", "B/s", 5153.15},
	} {
		if Better(tc.orig, nil) != Better(tc.tidy, nil) {
			t.Errorf("Better(%s) = %d, Better(%s) = %d", tc.orig, Better(tc.orig, nil), tc.tidy, Better(tc.tidy, nil))
		}
		scale := map[string]float64{"ns/op": 1e-9, "cpu-ns/op": 1e-9, "MB/s": 1e6}[tc.orig]
		if a, b := Format(tc.v, tc.orig), Format(tc.v*scale, tc.tidy); a != b {
			t.Errorf("Format(%v %s) = %q, Format of it tidied = %q", tc.v, tc.orig, a, b)
		}
	}
	// cpu-ns/op is CPU time: the dashboard once wrote it as raw seconds.
	if got := Format(7.9e-6, "cpu-sec/op"); got != "7.9µs" {
		t.Errorf("Format(7.9e-6 cpu-sec/op) = %q, want 7.9µs", got)
	}
}

// TestMetadataOverrides checks that an input's own Unit line wins over
// perfscope's defaults, and that without one the defaults hold.
func TestMetadataOverrides(t *testing.T) {
	meta := benchfmt.UnitMetadataMap{
		{Unit: Instructions, Key: "assume"}: {UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: Instructions, Key: "assume"}, Value: "nothing"},
		{Unit: "sec/op", Key: "better"}:     {UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "sec/op", Key: "better"}, Value: "higher"},
		{Unit: "B/op", Key: "better"}:       {UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "B/op", Key: "better"}, Value: "sideways"},
	}
	if Exact(Instructions, meta) {
		t.Error("instructions/op with assume=nothing: Exact")
	}
	if !Exact(Instructions, nil) {
		t.Error("instructions/op without metadata: not Exact")
	}
	if Exact("allocs/op", nil) {
		t.Error("allocs/op: Exact without metadata")
	}
	if got := Better("sec/op", meta); got != 1 {
		t.Errorf("sec/op with better=higher: Better = %d", got)
	}
	if got := Better("ns/op", meta); got != 1 {
		t.Errorf("ns/op (sec/op tidied) with better=higher: Better = %d", got)
	}
	if got := Better("B/op", meta); got != 0 {
		t.Errorf("B/op with better=sideways: Better = %d, want 0 (unknown)", got)
	}
}

// TestMetadataRoundTrip checks that the lines Metadata gives, written and
// read back, make a unit exact for benchfmt (and so for benchstat) too.
func TestMetadataRoundTrip(t *testing.T) {
	lines := Metadata(Instructions)
	if len(lines) == 0 {
		t.Fatal("no metadata for instructions/op")
	}
	meta := make(benchfmt.UnitMetadataMap)
	for _, m := range lines {
		meta[m.UnitMetadataKey] = m
	}
	if a := meta.GetAssumption(Instructions); a.SummaryLabel() != "exact" {
		t.Errorf("benchfmt reads instructions/op as %s", a.SummaryLabel())
	}
	if meta.GetBetter(Instructions) != -1 {
		t.Errorf("benchfmt reads instructions/op better = %d", meta.GetBetter(Instructions))
	}
	if Metadata("sec/op") != nil {
		t.Error("sec/op has perfscope metadata")
	}
	if Assumption(Instructions, nil).SummaryLabel() != "exact" || Assumption("sec/op", nil).SummaryLabel() != "median" {
		t.Error("Assumption disagrees with Exact")
	}
}

func TestImproves(t *testing.T) {
	for _, tc := range []struct {
		unit       string
		base, head float64
		want       int
	}{
		{"sec/op", 2e-6, 1e-6, 1},
		{"sec/op", 1e-6, 2e-6, -1},
		{Instructions, 2522, 20413, -1},
		{"B/s", 100, 200, 1},
		{"allocs/op", 1, 1, 0},
		{"allocs/op", 0, 2, -1},
		{"widgets/op", 1, 2, 0},
	} {
		if got := Improves(tc.unit, nil, tc.base, tc.head); got != tc.want {
			t.Errorf("Improves(%s, %v → %v) = %d, want %d", tc.unit, tc.base, tc.head, got, tc.want)
		}
	}
}
