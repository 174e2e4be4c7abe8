package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// pb builds protobuf messages for tests.
type pb []byte

func (b pb) varint(v uint64) pb {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func (b pb) uint(num, v uint64) pb { return b.varint(num << 3).varint(v) }

func (b pb) bytes(num uint64, data []byte) pb {
	return append(b.varint(num<<3|2).varint(uint64(len(data))), data...)
}

func (b pb) packed(num uint64, vs ...uint64) pb {
	var p pb
	for _, v := range vs {
		p = p.varint(v)
	}
	return b.bytes(num, p)
}

// base is a valid profile's frame: one sample type, the strings they
// name, one function and one location.
func base() pb {
	var b pb
	b = b.bytes(1, pb(nil).uint(1, 1).uint(2, 2)) // sample_type samples/count
	b = b.bytes(4, pb(nil).uint(1, 1).bytes(4, pb(nil).uint(1, 1).uint(2, 10)))
	b = b.bytes(5, pb(nil).uint(1, 1).uint(2, 3).uint(4, 4))
	for _, s := range []string{"", "samples", "count", "main.f", "/x/f.go", "key", "val"} {
		b = b.bytes(6, []byte(s))
	}
	return b
}

// shapes are profiles made almost entirely of one kind of item, the
// worst cases of memory per inflated byte.
func shapes() map[string][]byte {
	const n = 200_000
	repeat := func(b pb, item []byte, times int) []byte {
		for range times {
			b = append(b, item...)
		}
		return b
	}
	sample := pb(nil).bytes(2, pb(nil).packed(1, 1).packed(2, 1))
	labelled := pb(nil).bytes(2, pb(nil).packed(1, 1).packed(2, 1).bytes(3, pb(nil).uint(1, 5).uint(2, 6)))
	numLabelled := pb(nil).bytes(2, pb(nil).packed(1, 1).packed(2, 1).bytes(3, pb(nil).uint(1, 5).uint(3, 7).uint(4, 6)))
	frames := make([]uint64, n)
	for i := range frames {
		frames[i] = 1
	}
	var locations, functions, mappings pb
	for i := uint64(2); i < n; i++ {
		locations = locations.bytes(4, pb(nil).uint(1, i).bytes(4, pb(nil).uint(1, 1)))
		functions = functions.bytes(5, pb(nil).uint(1, i).uint(2, 3))
		mappings = mappings.bytes(3, pb(nil).uint(1, i).uint(5, 4))
	}
	var labels pb
	for range n {
		labels = labels.bytes(3, pb(nil).uint(1, 5).uint(2, 6))
	}
	var lines pb
	for range n {
		lines = lines.bytes(4, pb(nil).uint(1, 1))
	}
	return map[string][]byte{
		"samples":          repeat(base(), sample, n),
		"labelled samples": repeat(base(), labelled, n),
		"numeric labels":   repeat(base(), numLabelled, n),
		"deep frames":      repeat(base(), pb(nil).bytes(2, pb(nil).packed(1, frames...).packed(2, 1)), 4),
		"values":           repeat(base(), pb(nil).bytes(2, pb(nil).packed(1, 1).packed(2, frames...)), 4),
		"labels":           append(base(), pb(nil).bytes(2, append(pb(nil).packed(1, 1).packed(2, 1), labels...))...),
		"locations":        append(base(), locations...),
		"lines":            append(base(), pb(nil).bytes(4, append(pb(nil).uint(1, 2), lines...))...),
		"functions":        append(base(), functions...),
		"mappings":         append(base(), mappings...),
		"strings":          repeat(base(), pb(nil).bytes(6, nil), n),
		"comments":         repeat(base(), pb(nil).uint(13, 1), n),
	}
}

// TestEstimateBoundsParse holds the memory estimate above what pprof's
// parser allocates in all (a bound on its peak), for the profile shapes
// that cost the most memory per byte.
func TestEstimateBoundsParse(t *testing.T) {
	for name, data := range shapes() {
		t.Run(name, func(t *testing.T) {
			est := EstimateMemory(data)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			p, err := profile.ParseUncompressed(data)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("the test's profile does not parse: %v", err)
			}
			runtime.KeepAlive(p)
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("%d bytes: parsing allocated %d, estimated %d (%.2f×)", len(data), alloc, est, float64(est)/float64(alloc))
			if est < alloc {
				t.Errorf("estimated %d bytes, but parsing allocated %d", est, alloc)
			}
			if est > 6*alloc {
				t.Errorf("estimated %d bytes, over 6× the %d parsing allocated: the estimate refuses profiles that fit", est, alloc)
			}
		})
	}
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// realProfiles are the committed profiles of real programs.
func realProfiles(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pattern := range []string{"../*/testdata/*.pb.gz", "../*/testdata/*/*.pb.gz", "../*/testdata/*/*/*.pb.gz"} {
		m, _ := filepath.Glob(pattern)
		paths = append(paths, m...)
	}
	if len(paths) < 10 {
		t.Fatalf("found %d committed profiles, want the project's testdata", len(paths))
	}
	return paths
}

// TestRealProfilesWithinDefaults parses every committed real profile
// within the default limits, as pprof's own parser does.
func TestRealProfilesWithinDefaults(t *testing.T) {
	ctx := context.Background()
	var maxMem int64
	for _, path := range realProfiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := profile.ParseData(data)
		got, st, err := Parse(ctx, bytes.NewReader(data), Limits{})
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: bounded reader: %v; pprof: %v", path, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if len(got.Sample) != len(want.Sample) || len(got.Location) != len(want.Location) || st.Samples != int64(len(want.Sample)) {
			t.Errorf("%s: %d samples, %d locations (counted %d); pprof: %d, %d", path, len(got.Sample), len(got.Location), st.Samples, len(want.Sample), len(want.Location))
		}
		maxMem = max(maxMem, st.Memory)
	}
	t.Logf("largest estimate among real profiles: %d bytes", maxMem)
}

func TestLimits(t *testing.T) {
	ctx := context.Background()
	data := shapes()["samples"] // 200,000 samples, ~1.8 MB
	for _, tc := range []struct {
		name string
		in   []byte
		lim  Limits
		want string
	}{
		{"inflated", gz(t, data), Limits{MaxBytes: 1 << 20}, "inflated size is over the limit of 1 MiB"},
		{"plain", data, Limits{MaxBytes: 1 << 20}, "inflated size is over the limit of 1 MiB"},
		{"samples", gz(t, data), Limits{MaxSamples: 1000}, "samples 200,000, over the limit of 1,000"},
		{"locations", gz(t, shapes()["locations"]), Limits{MaxLocations: 1000}, "locations 199,999, over the limit of 1,000"},
		{"memory", gz(t, shapes()["labelled samples"]), Limits{MaxMemory: 64 << 20}, "estimated memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(ctx, bytes.NewReader(tc.in), tc.lim)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a limit error with %q", err, tc.want)
			}
		})
	}
	if _, _, err := Parse(ctx, bytes.NewReader(gz(t, data)), Limits{}); err != nil {
		t.Fatalf("within the defaults: %v", err)
	}
}

func TestGzipInsideGzip(t *testing.T) {
	_, _, err := Parse(context.Background(), bytes.NewReader(gz(t, gz(t, base()))), Limits{})
	if err == nil || !strings.Contains(err.Error(), "gzip inside gzip") {
		t.Fatalf("got %v", err)
	}
}

// Bomb returns a gzip stream that inflates to mib MiB of zeros: one
// member of a MiB compressed once and repeated, as readers of gzip read
// every member (compressing gigabytes would take minutes).
func Bomb(t testing.TB, mib int) []byte {
	t.Helper()
	member := gz(t, make([]byte, 1<<20))
	out := make([]byte, 0, len(member)*mib)
	for range mib {
		out = append(out, member...)
	}
	return out
}

// TestBombMemory reads a gzip bomb of 8 GiB and checks what it costs.
func TestBombMemory(t *testing.T) {
	bomb := Bomb(t, 8<<10)
	t.Logf("bomb: %d bytes inflating to 8 GiB", len(bomb))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, st, err := Parse(context.Background(), bytes.NewReader(bomb), Limits{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want a limit error", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused after inflating %d bytes, allocating %d in all", st.Inflated, alloc)
	if alloc > 3*DefaultMaxBytes {
		t.Fatalf("allocated %d bytes, over 3× the %d inflated limit", alloc, DefaultMaxBytes)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Parse(ctx, bytes.NewReader(gz(t, base())), Limits{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}
