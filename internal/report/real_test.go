package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// TestRealRun renders a run made of real profiles, those the test program
// of package profiles wrote once (internal/profiles/testdata/profiles),
// through the same path as 'perfscope report': load the run directory,
// analyse it, render it in every format. Committed profiles keep the
// verdict independent of where the sampler caught a live program.
func TestRealRun(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "profiles", "testdata", "profiles")
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd} {
		data, err := os.ReadFile(filepath.Join(src, kind+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, kind+".pb.gz"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := &run.Run{
		ID: "real", Target: "http://127.0.0.1:8080/", Start: time.Now(), Window: 5,
		Load: &loadgen.Result{Mode: "closed", Concurrency: 4, Requests: 1000, Successes: 1000, Throughput: 200, DurationSeconds: 5},
	}
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd} {
		saved.Profiles = append(saved.Profiles, run.ProfileFile{Kind: kind, File: kind + ".pb.gz"})
	}
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.File), data, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(loaded), profiles.Options{})
	if len(errs) > 0 {
		t.Errorf("analysis warnings: %v", errs)
	}
	for _, f := range []Format{Text, Markdown, JSON} {
		var buf bytes.Buffer
		if err := Write(&buf, f, a, nil); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{"main.burnCPU", "main.concatLoop", "main.makeBuffers", "main.waitOnChannel", "main.parkForever", "GET /fib"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %s", f, want)
			}
		}
		if f == Text {
			for _, want := range []string{"garbage collector", "(runtime: ", "Top allocation sites by objects", " at the start, "} {
				if !strings.Contains(out, want) {
					t.Errorf("text report lacks %q", want)
				}
			}
			if t.Failed() {
				t.Log(out)
			}
		}
	}
}

// TestSystemCallsShown renders the committed leftpad run, a third of whose
// CPU is in system calls, and checks that the CPU headline, the tables
// split by kind of code and the paths to the kernel say so, in every
// format, and that the unlabelled route is explained once.
func TestSystemCallsShown(t *testing.T) {
	saved, err := run.Load(filepath.Join("..", "profiles", "testdata", "leftpad-run"))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for f, wants := range map[Format][]string{
		Text: {
			"own CPU by kind of code: user code 0.0%, system calls 31.0%, runtime 52.6%, standard library 16.4%",
			"system calls 31.0% of CPU: made by the program: net write 20.3%, file write 4.3%, net read 3.0%; the runtime's own (scheduler, netpoll, memory) 3.4%",
			"(system calls: 6 functions)",
			"System calls by the path that led to them",
			"log.(*Logger).output",
			"(no route label): CPU not spent inside a request handler wrapped by perfscope's expose middleware",
		},
		Markdown: {"system calls 31.0% of CPU", "`net.(*netFD).Write`", "(no route label): CPU not spent"},
		JSON:     {`"syscalls":`, `"path":"net write"`, `"class":"syscall"`},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, f, a, nil); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if f == JSON {
			var compact bytes.Buffer
			if err := json.Compact(&compact, buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			out = compact.String()
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", f, want)
			}
		}
		if n := strings.Count(out, "(no route label): "); f != JSON && n != 1 {
			t.Errorf("%s report explains the unlabelled route %d times", f, n)
		}
	}
}
