package profseries

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// realProfiles reads the committed profiles of one type (capture.sh), in
// scrape order.
func realProfiles(t testing.TB, typ string) []*profile.Profile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "leftpad", typ+"-*.pb.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed %s profiles (%v)", typ, err)
	}
	sort.Strings(files)
	var ps []*profile.Profile
	for _, f := range files {
		ps = append(ps, profileFile(t, f))
	}
	return ps
}

// profileFile reads the profile in file.
func profileFile(t testing.TB, file string) *profile.Profile {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// capturedTypes are the types capture.sh records.
var capturedTypes = []string{CPU, Allocs, Heap, Goroutine, Mutex, Block}

// sampleKey writes everything that identifies a sample in pprof: its
// locations with their mappings and lines, and its labels.
func sampleKey(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		// Addresses relative to the mapping's start, as pprof's Merge
		// compares them; mapping flags are per profile (see
		// mappingContent).
		addr := l.Address
		if m := l.Mapping; m != nil {
			addr -= m.Start
			fmt.Fprintf(&b, " map[%#x@%#x %s %s]", m.Limit-m.Start, m.Offset, m.File, m.BuildID)
		}
		fmt.Fprintf(&b, "%#x folded=%v", addr, l.IsFolded)
		for _, ln := range l.Line {
			fmt.Fprintf(&b, " %s|%s|%s:%d:%d@%d", ln.Function.Name, ln.Function.SystemName, ln.Function.Filename, ln.Line, ln.Column, ln.Function.StartLine)
		}
		b.WriteByte(';')
	}
	for _, k := range sortedKeys(s.Label) {
		fmt.Fprintf(&b, " %s=%q", k, s.Label[k])
	}
	for _, k := range sortedKeys(s.NumLabel) {
		fmt.Fprintf(&b, " %s=%v%v", k, s.NumLabel[k], s.NumUnit[k])
	}
	return b.String()
}

// samplesOf lists p's samples as key and values, sorted: two profiles with
// the same samples, in any order, give the same list.
func samplesOf(p *profile.Profile) []string {
	out := make([]string, len(p.Sample))
	for i, s := range p.Sample {
		out[i] = sampleKey(s) + fmt.Sprint(s.Value)
	}
	sort.Strings(out)
	return out
}

// sums adds p's values per sample key.
func sums(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		k := sampleKey(s)
		if out[k] == nil {
			out[k] = make([]int64, len(s.Value))
		}
		for i, v := range s.Value {
			out[k][i] += v
		}
	}
	return out
}

// window interns and encodes p and decodes it back, as the store does.
func window(t testing.TB, c *Codec, d *Dictionary, p *profile.Profile) (Window, int) {
	t.Helper()
	shapeID, samples, err := Intern(p, d)
	if err != nil {
		t.Fatal(err)
	}
	block, err := c.Encode(samples, len(p.SampleType), p.Period)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := c.Decode(block)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := d.Lookup(KindShape, []uint64{shapeID})
	shape, err := DecodeShape(sc[shapeID])
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(0, p.TimeNanos).UTC()
	return Window{Start: start, End: start.Add(time.Duration(p.DurationNanos)), Duration: time.Duration(p.DurationNanos), Shape: shape, Samples: decoded}, len(block)
}

// TestRoundTrip: a real profile interned, encoded, decoded and rebuilt has
// exactly the samples, values and stacks it had, and is a valid profile.
func TestRoundTrip(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range capturedTypes {
		for i, p := range realProfiles(t, typ) {
			w, _ := window(t, c, d, p)
			sy, err := Resolve(d, StackIDs(w))
			if err != nil {
				t.Fatal(err)
			}
			got, err := sy.Profile(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.CheckValid(); err != nil {
				t.Fatalf("%s %d: rebuilt profile invalid: %v", typ, i, err)
			}
			if want, have := samplesOf(p), samplesOf(got); !slices.Equal(want, have) {
				t.Errorf("%s %d: %d samples in, %d out, or they differ", typ, i, len(want), len(have))
			}
			header := func(p *profile.Profile) string {
				return fmt.Sprintf("%d %s %d %d %s %s %v %s %s", p.Period, p.DefaultSampleType, p.TimeNanos, p.DurationNanos,
					valueTypes(p.SampleType), valueTypes([]*profile.ValueType{p.PeriodType}), p.Comments, p.DropFrames, p.KeepFrames)
			}
			if header(got) != header(p) {
				t.Errorf("%s %d: header\n%s\nwant\n%s", typ, i, header(got), header(p))
			}
		}
	}
	// Scrapes repeat: the dictionary holds each item once.
	t.Logf("interned: %d functions, %d mappings, %d locations, %d stacks, %d shapes",
		d.Len(KindFunction), d.Len(KindMapping), d.Len(KindLocation), d.Len(KindStack), d.Len(KindShape))
	// allocs and heap, mutex and block have the same sample types.
	if d.Len(KindShape) != 4 {
		t.Errorf("%d shapes for the 6 types, want 4", d.Len(KindShape))
	}
}

// TestMergeEqualsPprof: merging scrapes gives, per stack, the values
// pprof's own profile.Merge gives.
func TestMergeEqualsPprof(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range capturedTypes {
		ps := realProfiles(t, typ)
		var ws []Window
		for _, p := range ps {
			w, _ := window(t, c, d, p)
			ws = append(ws, w)
		}
		got, err := MergedProfile(ws, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.CheckValid(); err != nil {
			t.Fatalf("%s: merged profile invalid: %v", typ, err)
		}
		copies := make([]*profile.Profile, len(ps))
		for i, p := range ps {
			copies[i] = p.Copy()
		}
		want, err := profile.Merge(copies)
		if err != nil {
			t.Fatal(err)
		}
		ws2, gs := sums(want), sums(got)
		if len(ws2) != len(gs) {
			t.Errorf("%s: pprof merges into %d stacks, we into %d", typ, len(ws2), len(gs))
		}
		for k, v := range ws2 {
			if !slices.Equal(gs[k], v) {
				t.Errorf("%s: stack %.200s: pprof %v, we %v", typ, k, v, gs[k])
				break
			}
		}
		if got.DurationNanos != want.DurationNanos || got.TimeNanos != want.TimeNanos || got.Period != want.Period {
			t.Errorf("%s: header: time %d/%d duration %d/%d period %d/%d", typ, got.TimeNanos, want.TimeNanos, got.DurationNanos, want.DurationNanos, got.Period, want.Period)
		}
	}
	if _, err := Merge([]Window{{Shape: Shape{SampleTypes: []ValueType{{"a", "b"}}}}, {Shape: Shape{SampleTypes: []ValueType{{"c", "d"}}}}}); err == nil {
		t.Error("incompatible windows merged")
	}
}

// TestMergeAsDecoded: merging encoded blocks as they are decoded, one
// buffer reused from block to block, gives what merging the decoded
// windows gives, on every type of the real scrapes, each block twice.
func TestMergeAsDecoded(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range capturedTypes {
		var ws []Window
		var m Merger
		for range 2 {
			for _, p := range realProfiles(t, typ) {
				shapeID, samples, err := Intern(p, d)
				if err != nil {
					t.Fatal(err)
				}
				block, err := c.Encode(samples, len(p.SampleType), p.Period)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := window(t, c, d, p)
				w.Processes = []TargetProcess{{Target: NewLabels(map[string]string{"job": typ}), Process: Process{Generation: int(shapeID)}}}
				ws = append(ws, w)
				header := w
				header.Samples = nil
				if err := m.AddBlock(c, header, block); err != nil {
					t.Fatal(err)
				}
			}
		}
		want, err := Merge(ws)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Window()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: merged as decoded: %d stacks over %v; merged windows: %d stacks over %v", typ, len(got.Samples), got.Duration, len(want.Samples), want.Duration)
		}
	}
}

// TestBlockCorrupt: a damaged block is an error, never a panic or a
// wrong answer taken for a right one.
func TestBlockCorrupt(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	_, samples, err := Intern(realProfiles(t, CPU)[0], d)
	if err != nil {
		t.Fatal(err)
	}
	block, err := c.Encode(samples, 2, 1e7)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, {7}, block[:len(block)/2], append(bytes.Clone(block), 0)} {
		if _, err := c.Decode(bad); err == nil {
			t.Errorf("corrupt block of %d bytes decoded", len(bad))
		}
	}
}

func FuzzBlock(f *testing.F) {
	c := NewCodec()
	f.Add([]byte{blockRaw, 2, 1, 1, 1, modeVarints, 2, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		samples, err := c.Decode(b)
		if err != nil {
			return
		}
		columns := 0
		if len(samples) > 0 {
			columns = len(samples[0].Values)
		}
		again, err := c.Encode(slices.Clone(samples), columns, 512*1024)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(again)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(back) != fmt.Sprint(samples) {
			t.Fatalf("re-encoding changed the samples")
		}
	})
}

func valueTypes(vs []*profile.ValueType) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, v.Type+"/"+v.Unit)
	}
	return strings.Join(parts, ",")
}

// TestBlockSizes: heap and allocs samples stored with their sizes decode
// to exactly the values they had, sizes included, in fewer bytes than
// without; a block written in the first layout still decodes.
func TestBlockSizes(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range []string{Allocs, Heap} {
		for i, p := range realProfiles(t, typ) {
			_, samples, err := Intern(p, d)
			if err != nil {
				t.Fatal(err)
			}
			// Encode sorts by stack: sort first, to compare.
			slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
			want := fmt.Sprint(samples)
			plain := make([]Sample, len(samples))
			for k, s := range samples {
				plain[k] = Sample{Stack: s.Stack, Values: slices.Clone(s.Values)}
			}
			sized, err := c.Encode(samples, len(p.SampleType), p.Period)
			if err != nil {
				t.Fatal(err)
			}
			unsized, err := c.Encode(plain, len(p.SampleType), p.Period)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Decode(sized)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != want {
				t.Errorf("%s %d: sized block decodes to other samples", typ, i)
			}
			if len(sized) >= len(unsized) {
				t.Errorf("%s %d: %d bytes with sizes, %d without", typ, i, len(sized), len(unsized))
			}
		}
	}
	// The first layout: 2 samples of 1 column, stacks 1 and 2, values 1
	// and 2.
	got, err := c.Decode([]byte{blockRaw, 2, 1, 1, 1, modeVarints, 2, 4})
	if err != nil || fmt.Sprint(got) != "[{1 [1] 0} {2 [2] 0}]" {
		t.Errorf("first layout: %v, %v", got, err)
	}
	// A sized column that names itself or a later one as its base.
	if _, err := c.Decode([]byte{blockRaw2, 1, 1, 1, 1, 2, 16, modeSized, 0, 0}); err == nil {
		t.Error("a column based on itself decoded")
	}
}

// TestBlockSizesExtreme: values no runtime writes (negative, the int64
// limits, sizes beyond the rate) still come back exact.
func TestBlockSizesExtreme(t *testing.T) {
	c := NewCodec()
	samples := []Sample{
		{Stack: 1, Size: 16, Values: []int64{32768, 524296, -32768, -524296}},
		{Stack: 2, Size: 1 << 40, Values: []int64{math.MaxInt64, math.MinInt64, 1, -1}},
		{Stack: 3, Size: 100, Values: []int64{math.MinInt64, math.MaxInt64, math.MaxInt64 / 3, 7}},
		{Stack: 4, Size: 0, Values: []int64{5, 0, 0, 3}},
		{Stack: 5, Size: 524287, Values: []int64{1, 524287, 2, 1048574}},
	}
	want := fmt.Sprint(samples)
	for _, period := range []int64{0, 1, 512 * 1024, 1 << 40} {
		block, err := c.Encode(slices.Clone(samples), 4, period)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Decode(block)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("period %d: %v, %v; want %s", period, got, err, want)
		}
	}
}

// realWindows is each committed real scrape of typ as one window.
func realWindows(t *testing.T, c *Codec, d *Dictionary, typ string) []Window {
	t.Helper()
	var ws []Window
	for _, p := range realProfiles(t, typ) {
		w, _ := window(t, c, d, p)
		ws = append(ws, w)
	}
	return ws
}

// TestFunctionSeriesAsProfiles: every point of a function series is what
// ranking the functions of the step's merged profile gives (the profile
// built and profiles.Functions run on it), for the top functions of every
// type of the real scrapes, by flat and by cum, at steps of one scrape, two
// and all; and a name no scrape holds is an error.
func TestFunctionSeriesAsProfiles(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range capturedTypes {
		ws := realWindows(t, c, d, typ)
		all, err := MergedProfile(ws, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, sampleType := range []string{"", all.SampleType[0].Type} {
			ft, err := profiles.Functions(all, sampleType, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, order := range []profiles.Order{profiles.ByFlat, profiles.ByCum} {
				for _, r := range ft.Top(order, 4, false).Rows {
					names = append(names, r.Function)
				}
			}
			span := ws[len(ws)-1].Start.Sub(ws[0].Start)
			for _, step := range []time.Duration{time.Second, span/2 + time.Second, 2*span + time.Hour} {
				for _, fn := range names {
					got, err := FunctionSeries(ws, d, fn, sampleType, step)
					if err != nil {
						t.Fatalf("%s %s per %v: %v", typ, fn, step, err)
					}
					want := functionSeriesOfProfiles(t, ws, d, fn, sampleType, step)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s %q, %s per %v:\n got %+v\nwant %+v", typ, sampleType, fn, step, got, want)
					}
				}
			}
		}
		if _, err := FunctionSeries(ws, d, "no.such", "", time.Minute); !errors.Is(err, ErrNoFunction) {
			t.Errorf("%s: a function no scrape holds: %v, want ErrNoFunction", typ, err)
		}
	}
}

// functionSeriesOfProfiles is a function series the long way: each step's
// windows merged, its profile built, its functions ranked.
func functionSeriesOfProfiles(t *testing.T, ws []Window, src SymbolSource, function, sampleType string, step time.Duration) []FunctionPoint {
	t.Helper()
	byStep := map[int64][]Window{}
	var keys []int64
	for _, w := range ws {
		k := w.Start.UnixNano() / int64(step)
		if byStep[k] == nil {
			keys = append(keys, k)
		}
		byStep[k] = append(byStep[k], w)
	}
	slices.Sort(keys)
	var out []FunctionPoint
	for _, k := range keys {
		p, err := MergedProfile(byStep[k], src)
		if err != nil {
			t.Fatal(err)
		}
		ft, err := profiles.Functions(p, sampleType, nil)
		if err != nil {
			t.Fatal(err)
		}
		pt := FunctionPoint{Start: time.Unix(0, k*int64(step)).UTC(), Total: ft.Total, Scrapes: len(byStep[k])}
		if r, ok := ft.Find(function); ok {
			pt.Flat, pt.Cum, pt.FlatShare, pt.CumShare = r.Flat, r.Cum, r.FlatShare, r.CumShare
		}
		out = append(out, pt)
	}
	return out
}
