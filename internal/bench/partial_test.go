package bench

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResultsFile(t *testing.T) {
	for _, tc := range []struct {
		name        string
		writes      []string
		interrupted bool
		want        string
	}{
		{"complete", []string{"goos: linux\nBench", "markA-2 \t 10\t 5 ns/op\n", "PASS\n"}, false,
			"goos: linux\nBenchmarkA-2 \t 10\t 5 ns/op\nPASS\n"},
		{"interrupted while measuring", []string{"goos: linux\nBenchmarkA-2 \t 10\t 5 ns/op\n", "BenchmarkA-2 \t"}, true,
			"goos: linux\nBenchmarkA-2 \t 10\t 5 ns/op\ninterrupted: true\n"},
		{"unfinished last line", []string{"goos: linux\n", "PASS"}, false,
			"goos: linux\nPASS\n"},
		{"interrupted before any output", nil, true,
			"interrupted: true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.txt")
			f, err := createResults(path)
			if err != nil {
				t.Fatal(err)
			}
			var written strings.Builder
			for _, w := range tc.writes {
				if _, err := f.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
				written.WriteString(w)
				// Only whole lines reach the file while it is written.
				data, err := os.ReadFile(path + PartialSuffix)
				if err != nil {
					t.Fatal(err)
				}
				s := written.String()
				if want := s[:strings.LastIndexByte(s, '\n')+1]; string(data) != want {
					t.Errorf("after writing %q the partial file holds %q, want %q", s, data, want)
				}
			}
			if err := f.finish(tc.interrupted); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path + PartialSuffix); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("partial file left after finish: %v", err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.want {
				t.Errorf("results file %q, want %q", data, tc.want)
			}
			res, err := Parse(bytes.NewReader(data), path)
			if err != nil || len(res.Warnings) > 0 {
				t.Errorf("read with %v, warnings %v", err, res.Warnings)
			}
			for _, r := range res.Results {
				if r.GetConfig(InterruptedKey) != "" {
					t.Errorf("result %s carries the interrupted line, which must apply to none", r.Name)
				}
			}
		})
	}
}

func TestResultsFileReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.txt")
	if err := os.WriteFile(path, []byte("BenchmarkA-2 \t 10\t 5 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := reopenResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("results file still under its final name while appended to: %v", err)
	}
	if _, err := f.Write([]byte("Unit instructions/op assume=exact\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.finish(true); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if want := "BenchmarkA-2 \t 10\t 5 ns/op\nUnit instructions/op assume=exact\ninterrupted: true\n"; err != nil || string(data) != want {
		t.Errorf("reopened results file %q (%v), want %q", data, err, want)
	}
}

// TestRunInterrupted cancels a run after its first result: the results
// file keeps that result under its final name, ends with the interrupted
// line and reads without warnings.
func TestRunInterrupted(t *testing.T) {
	dir := sleepModule(t)
	out := filepath.Join(t.TempDir(), "r.txt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := Run(ctx, Options{
		Dir: dir, Count: 100000, Benchtime: "5x", Output: out,
		Progress: func(p Progress) {
			if p.Done {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) || run == nil || !run.Interrupted {
		t.Fatalf("cancelled run: %v, %+v; want context.Canceled and a run marked interrupted", err, run)
	}
	if _, err := os.Stat(out + PartialSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("partial file left by an interrupted run: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "\ninterrupted: true\n") {
		t.Errorf("results file does not end with the interrupted line:\n%s", data)
	}
	res, err := Parse(bytes.NewReader(data), out)
	if err != nil || len(res.Warnings) > 0 || len(res.Results) == 0 {
		t.Errorf("results file read with %v, warnings %v, %d results; want the result measured before the interruption:\n%s", err, res.Warnings, len(res.Results), data)
	}
	if len(run.Results.Results) != len(res.Results) {
		t.Errorf("the run holds %d results, its file %d", len(run.Results.Results), len(res.Results))
	}
}

// sleepModule returns the directory of testdata/sleep, whose benchmark runs
// for as long as it is told without using the CPU; it skips tests that
// run it in short mode.
func sleepModule(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a benchmark")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "sleep"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
