package profiles

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// profilesDir holds real profiles that testdata/workload wrote once
// (testdata/profiles/capture.sh). Tests of the analysis read these instead
// of running the program, so no verdict depends on how busy the machine is
// or where the sampler happened to catch the program.
const profilesDir = "testdata/profiles"

// TestProfilesMatchWorkload fails when testdata/workload changed after its
// profiles were captured: the tests look up lines marked "site:" in its
// source, which must be the source the profiles were taken from.
func TestProfilesMatchWorkload(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(profilesDir, "source.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, pattern := range []string{"testdata/workload/*.go", "testdata/workload/shapes/*.go"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(string(want)) {
		t.Fatalf("testdata/workload changed since its profiles were captured: run bash internal/profiles/testdata/profiles/capture.sh")
	}
}

// load parses one of the workload's profiles (by file base name). The
// profile names the files of the checkout it was built in; they are moved
// to this checkout so that source lines can be read as on the machine
// that took the profile.
func load(t *testing.T, name string) *profile.Profile {
	t.Helper()
	f, err := os.Open(filepath.Join(profilesDir, name+".pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs(filepath.Join("testdata", "workload"))
	if err != nil {
		t.Fatal(err)
	}
	const built = "/internal/profiles/testdata/workload/"
	for _, fn := range p.Function {
		if i := strings.Index(fn.Filename, built); i >= 0 {
			fn.Filename = filepath.Join(here, filepath.FromSlash(fn.Filename[i+len(built):]))
		}
	}
	return p
}

// siteLine finds the line of testdata/workload/main.go marked "// site: name".
func siteLine(t *testing.T, name string) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "workload", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := int64(1); sc.Scan(); n++ {
		if strings.HasSuffix(sc.Text(), "// site: "+name) || strings.Contains(sc.Text(), "// site: "+name+" ") {
			return n
		}
	}
	t.Fatalf("no line marked site: %s", name)
	return 0
}

// userRows returns the user-code rows of a focused table, in order.
func userRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Class == User && r.Folded == 0 {
			out = append(out, r)
		}
	}
	return out
}

func names(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Function
	}
	return out
}
