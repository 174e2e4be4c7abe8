package fetch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// FuzzParse feeds the bounded reader arbitrary bytes, gzipped or not,
// under small limits: it never panics, refuses only with a limit error or
// a parse error, and what it accepts is a valid profile whose counts are
// what pprof parsed.
func FuzzParse(f *testing.F) {
	for _, path := range []string{"../profiles/testdata/leftpad/cpu.pb.gz", "../profiles/testdata/leftpad/allocs.pb.gz"} {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(base()))
	f.Add(gz(f, base()))
	f.Add(gz(f, gz(f, base())))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n"))
	lim := Limits{MaxBytes: 1 << 20, MaxSamples: 10_000, MaxLocations: 10_000, MaxMemory: 16 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, st, err := Parse(context.Background(), bytes.NewReader(data), lim)
		if err != nil {
			if p != nil {
				t.Fatal("a profile with an error")
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("accepted an invalid profile: %v", err)
		}
		if st.Inflated > lim.MaxBytes || st.Memory > lim.MaxMemory {
			t.Fatalf("accepted beyond the limits: %+v", st)
		}
		if st.Samples != 0 && st.Samples != int64(len(p.Sample)) {
			t.Fatalf("counted %d samples, parsed %d", st.Samples, len(p.Sample))
		}
		if _, err := profile.ParseData(data); err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("accepted what pprof refuses: %v", err)
		}
	})
}
