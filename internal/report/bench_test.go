package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gate"
)

func benchRun(t *testing.T) *bench.RunRecord {
	t.Helper()
	res, err := bench.Parse(strings.NewReader("pkg: example.com/a\nBenchmarkA-8 10 5 ns/op\nBenchmarkA-8 10 6 ns/op\nBenchmarkB-8 10 7 ns/op\nBenchmarkC-8 x\n"), "res.txt")
	if err != nil {
		t.Fatal(err)
	}
	return &bench.RunRecord{
		Meta:    bench.Meta{Commit: "0123456789abcdef0123", Dirty: true, GoVersion: "go1.26.0", CPU: "Test CPU"},
		Path:    "res.txt",
		Args:    []string{"-run", "^$", "-bench", "."},
		Results: res,
		Packages: []bench.PackageRun{
			{ImportPath: "example.com/a", CPUProfile: "res.example.com_a.cpu.pb.gz"},
			{ImportPath: "example.com/b", Err: errors.New("exit status 1")},
		},
	}
}

func TestWriteBenchRun(t *testing.T) {
	var text bytes.Buffer
	if err := WriteBenchRun(&text, Text, benchRun(t)); err != nil {
		t.Fatal(err)
	}
	want := "3 results of 2 benchmarks in 2 packages -> res.txt\n" +
		"commit 0123456789ab (dirty)  go1.26.0  Test CPU\n" +
		"profiles of example.com/a: res.example.com_a.cpu.pb.gz\n"
	if text.String() != want {
		t.Errorf("text =\n%s\nwant\n%s", text.String(), want)
	}

	var js bytes.Buffer
	if err := WriteBenchRun(&js, JSON, benchRun(t)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path     string
		Results  int
		Packages []struct {
			ImportPath string `json:"import_path"`
			CPUProfile string `json:"cpu_profile"`
			Error      string
		}
		Warnings []string
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != "res.txt" || got.Results != 3 || len(got.Packages) != 2 || got.Packages[0].CPUProfile == "" ||
		got.Packages[1].Error != "exit status 1" || len(got.Warnings) != 1 {
		t.Errorf("JSON = %s", js.String())
	}
}

// TestCountNotes checks how what limited instruction counts is written:
// in a benchmark run's notes after its own, in text and JSON, and in a
// gate's before its own, a benchmark noted only in the base saying so.
func TestCountNotes(t *testing.T) {
	capped := &bench.AllocationCap{BytesPerOp: 4096, Limit: 1 << 20, Wanted: 10000, Counted: 253}
	over := &bench.AllocationCap{BytesPerOp: 1 << 30, Limit: 1 << 20, Wanted: 10000, Counted: 1, Over: true, Shorter: 2, Longer: 3}
	notes := []bench.CountNote{
		{Benchmark: "example.com/work BenchmarkWrite", Err: errors.New("head reason")},
		{Benchmark: "example.com/work BenchmarkAlloc", Capped: capped},
		{Benchmark: "example.com/work BenchmarkHuge", Capped: over},
		{Benchmark: "example.com/work BenchmarkOld", BaseOnly: true, Err: errors.New("only in the base")},
	}
	want := []string{
		"example.com/work BenchmarkWrite: no instruction count, measured by time only: head reason",
		"example.com/work BenchmarkAlloc: 4096 B of allocation per operation: counted over 253 operations instead of 10000 to stay under 1 MiB with the collector off; the count is less precise",
		"example.com/work BenchmarkHuge: 1073741824 B of allocation per operation: even the fewest operations a count runs (2 in its shorter run, 3 in its longer) allocate more than 1 MiB with the collector off",
		"example.com/work BenchmarkOld (in the base): no instruction count, measured by time only: only in the base",
	}

	run := benchRun(t)
	run.Notes = []string{"an earlier note"}
	run.CountNotes = notes
	var text, js bytes.Buffer
	if err := WriteBenchRun(&text, Text, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteBenchRun(&js, JSON, run); err != nil {
		t.Fatal(err)
	}
	var got struct{ Notes []string }
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if all := append([]string{"an earlier note"}, want...); !slices.Equal(got.Notes, all) {
		t.Errorf("JSON notes:\n%s\nwant:\n%s", strings.Join(got.Notes, "\n"), strings.Join(all, "\n"))
	}
	for _, n := range want {
		if !strings.Contains(text.String(), "note: "+n+"\n") {
			t.Errorf("text lacks the note %q:\n%s", n, text.String())
		}
	}
	if len(run.Notes) != 1 {
		t.Errorf("writing the run changed its notes: %q", run.Notes)
	}

	rep := &gate.Report{Decision: gate.Decide(nil, gate.Config{}), CountNotes: notes, Notes: []string{"a gate's own note"}}
	js.Reset()
	if err := WriteGate(&js, JSON, rep); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if all := append(slices.Clone(want), "a gate's own note"); !slices.Equal(got.Notes, all) {
		t.Errorf("gate JSON notes:\n%s\nwant:\n%s", strings.Join(got.Notes, "\n"), strings.Join(all, "\n"))
	}
}

func TestBuildingTests(t *testing.T) {
	if got := BuildingTests([]string{"example.com/a"}); got != "building the tests of example.com/a" {
		t.Errorf("one package: %q", got)
	}
	if got := BuildingTests([]string{"example.com/a", "example.com/b", "example.com/c"}); got != "building the tests of 3 packages" {
		t.Errorf("three packages: %q", got)
	}
}
