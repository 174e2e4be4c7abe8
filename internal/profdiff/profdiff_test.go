package profdiff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// cpuProfile builds a CPU profile where each leaf function has the given
// nanoseconds, all called from main.
func cpuProfile(leaves map[string]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
	}
	mainFn := &profile.Function{ID: 1, Name: "main.main"}
	p.Function = append(p.Function, mainFn)
	mainLoc := &profile.Location{ID: 1, Line: []profile.Line{{Function: mainFn}}}
	p.Location = append(p.Location, mainLoc)
	id := uint64(2)
	for name, ns := range leaves {
		fn := &profile.Function{ID: id, Name: name}
		loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc, mainLoc}, Value: []int64{ns / 1e7, ns}})
		id++
	}
	return p
}

func writeProfile(t *testing.T, path string, p *profile.Profile) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
}

func TestCompute(t *testing.T) {
	dir := t.TempDir()
	// Profiles beside results files, as 'perfscope bench' saves them.
	writeProfile(t, filepath.Join(dir, "old.example.com_x.cpu.pb.gz"), cpuProfile(map[string]int64{"x.pad": 100e6, "x.log": 50e6}))
	writeProfile(t, filepath.Join(dir, "new.example.com_x.cpu.pb.gz"), cpuProfile(map[string]int64{"x.pad": 300e6, "x.log": 40e6}))
	pairs, err := Pairs([]string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")}, nil)
	if err != nil || len(pairs) != 1 || pairs[0].Kind != "cpu" {
		t.Fatalf("pairs %+v, %v; want one cpu pair", pairs, err)
	}
	d, err := Compute(pairs[0], 5)
	if err != nil {
		t.Fatal(err)
	}
	if d.BaseTotal != 150e6 || d.HeadTotal != 340e6 || d.SampleType != "cpu/nanoseconds" {
		t.Errorf("totals %d → %d of %s", d.BaseTotal, d.HeadTotal, d.SampleType)
	}
	if len(d.ByFlat) != 2 || d.ByFlat[0].Function != "x.pad" || d.ByFlat[0].Flat != 200e6 || d.ByFlat[1].Flat != -10e6 {
		t.Errorf("by flat: %+v", d.ByFlat)
	}
	if len(d.ByCum) != 3 || d.ByCum[0].Function != "x.pad" || d.ByCum[1].Function != "main.main" || d.ByCum[1].Cum != 190e6 || d.ByCum[1].Flat != 0 {
		t.Errorf("by cum: %+v", d.ByCum)
	}

	// Explicit profiles that are not profiles are an error, not a panic.
	bad := filepath.Join(dir, "bad.pb.gz")
	os.WriteFile(bad, []byte("<html>"), 0o644)
	if _, err := Compute(Pair{Base: []string{bad}, Head: []string{bad}}, 5); err == nil {
		t.Error("no error for a file that is not a profile")
	}
}

// TestComputeRealProfiles diffs the real profiles that internal/profiles
// captured from its test program: a profile against itself changes
// nothing, and against itself doubled every function grows by its own
// value.
func TestComputeRealProfiles(t *testing.T) {
	dir := "../profiles/testdata/profiles"
	for _, tc := range []struct{ file, sampleType string }{{"cpu.pb.gz", "cpu/nanoseconds"}, {"allocs.pb.gz", "alloc_space/bytes"}} {
		path := filepath.Join(dir, tc.file)
		same, err := Compute(Pair{Kind: "profile", Base: []string{path}, Head: []string{path}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if same.SampleType != tc.sampleType || same.BaseTotal == 0 || same.BaseTotal != same.HeadTotal || len(same.ByFlat)+len(same.ByCum) != 0 {
			t.Errorf("%s against itself: %s, totals %d → %d, %d+%d changed functions", tc.file, same.SampleType, same.BaseTotal, same.HeadTotal, len(same.ByFlat), len(same.ByCum))
		}

		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		p.Scale(2)
		doubled := filepath.Join(t.TempDir(), "doubled.pb.gz")
		writeProfile(t, doubled, p)
		d, err := Compute(Pair{Kind: "profile", Base: []string{path}, Head: []string{doubled}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.ByFlat) == 0 || d.HeadTotal != 2*d.BaseTotal {
			t.Fatalf("%s doubled: totals %d → %d, %d functions by flat", tc.file, d.BaseTotal, d.HeadTotal, len(d.ByFlat))
		}
		for i, fn := range d.ByFlat {
			if fn.Flat <= 0 || fn.Cum < fn.Flat || i > 0 && fn.Flat > d.ByFlat[i-1].Flat {
				t.Errorf("%s doubled: by flat %+v: every function grows, ranked by growth", tc.file, d.ByFlat)
				break
			}
		}
	}
}
