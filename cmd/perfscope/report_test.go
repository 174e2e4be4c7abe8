package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/run"
)

// TestReportUnreadableProfiles re-renders copies of a committed run whose
// profile files the test damages: a run none of whose profiles can be read
// fails with one line naming the run and the damaged file; a run with one
// readable profile left, or one captured without profiles, is reported.
func TestReportUnreadableProfiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// keep are the profile kinds left in run.json (nil: all), damage
		// those whose files are cut in half.
		keep, damage []string
		fail         bool
	}{
		{"only profile damaged", []string{run.KindCPU}, []string{run.KindCPU}, true},
		{"every profile damaged", nil, []string{run.KindCPU, run.KindAllocs, run.KindHeap, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd}, true},
		{"one profile damaged of two", []string{run.KindCPU, run.KindAllocs}, []string{run.KindCPU}, false},
		{"captured without profiles", []string{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, committedRun, tc.keep)
			for _, kind := range tc.damage {
				path := filepath.Join(dir, kind+".pb.gz")
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := runCLI(t, "report", "--no-source", dir)
			if !tc.fail {
				if err != nil {
					t.Errorf("perfscope report: %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("perfscope report of a run whose profiles are all damaged succeeded:\n%s", out)
			}
			if _, usage := err.(usageError); usage {
				t.Errorf("exit status 2 for %v, want 1", err)
			}
			msg := err.Error()
			for _, want := range []string{"run " + dir + ": none of its profiles could be read", "cpu.pb.gz: "} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			// The report itself still shows the load.
			if !strings.Contains(out, "LOAD") {
				t.Errorf("no load section in the report of the unreadable run:\n%s", out)
			}
		})
	}
}

// copyRun copies the run directory src into a new directory, keeping in
// its run.json only the profiles of the kinds keep names (nil: all).
func copyRun(t *testing.T, src string, keep []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run-under-test")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if keep == nil {
		return dir
	}
	path := filepath.Join(dir, run.File)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	kept := []any{}
	for _, p := range doc["profiles"].([]any) {
		for _, k := range keep {
			if p.(map[string]any)["kind"] == k {
				kept = append(kept, p)
			}
		}
	}
	doc["profiles"] = kept
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
