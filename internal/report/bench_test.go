package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
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
