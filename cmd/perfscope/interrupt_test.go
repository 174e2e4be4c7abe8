package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// buildPerfscope builds the command into a temporary directory, so that a
// test can send it real signals.
func buildPerfscope(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perfscope")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveBusy serves, on a loopback port of its own, a handler that burns
// CPU, with net/http/pprof beside it; it returns the handler's URL.
func serveBusy(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(r.URL.Path))
		for range 2000 {
			sum = sha256.Sum256(sum[:])
		}
		w.Write(sum[:4])
	})
	origin, _ := serveWithPprof(t, mux)
	return origin + "/work"
}

// TestProfileInterruptKeepsEverything interrupts a 20 s 'perfscope profile'
// with SIGINT a few seconds into its profile window: the run must hold a
// CPU profile of the elapsed window, be marked interrupted and be in the
// store.
func TestProfileInterruptKeepsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs a load")
	}
	bin := buildPerfscope(t)
	target := serveBusy(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	db := filepath.Join(dir, "perfscope.db")
	cmd := exec.Command(bin, "profile", "-d", "20s", "-c", "2", "--out", out, "--db", db, target)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var log []string
	for lines.Scan() {
		log = append(log, lines.Text())
		if strings.HasPrefix(lines.Text(), "profiling for") {
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	windowOpen := time.Now()
	// Into the third CPU chunk: two whole chunks and part of one.
	time.Sleep(5 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	signalled := time.Since(windowOpen)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("perfscope profile after SIGINT: %v, want exit status 130; its log:\n%s", err, strings.Join(log, "\n"))
	}

	saved, err := run.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Interrupted {
		t.Error("run.json does not say the run was interrupted")
	}
	p, err := saved.Open(run.KindCPU)
	if err != nil {
		t.Fatalf("cpu profile of the interrupted run: %v", err)
	}
	covered := time.Duration(p.DurationNanos)
	// The profile covers the window up to the signal, the chunk in
	// progress included, and nothing like the 20 s asked for. The lower
	// bound is one chunk, which holds however slowly a busy machine
	// answers between chunks.
	chunk := capture.DefaultCPUChunk
	if covered < chunk || covered > signalled+2*chunk || covered >= 19*time.Second {
		t.Errorf("cpu profile covers %s; the signal came %s into the window", covered, signalled)
	}
	if len(p.Sample) == 0 {
		t.Error("cpu profile of a busy service has no samples")
	}
	for _, kind := range []string{run.KindAllocs, run.KindHeap, run.KindGoroutineStart, run.KindGoroutineEnd} {
		if !saved.Has(kind) {
			pf, _ := saved.Lookup(kind)
			t.Errorf("no %s profile after the interruption: %s", kind, pf.Error)
		}
	}

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ProfileRuns(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != saved.ID {
		t.Errorf("store holds %+v; want the interrupted run %s", runs, saved.ID)
	}
}

// TestBenchInterruptKeepsResults interrupts 'perfscope bench' with SIGINT
// once its first results are in the file: they stay there, marked
// interrupted, and are in the store, marked too; the exit status is 130.
func TestBenchInterruptKeepsResults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs benchmarks")
	}
	bin := buildPerfscope(t)
	repo := newGateRepo(t)
	out := filepath.Join(t.TempDir(), "bench.txt")
	db := filepath.Join(t.TempDir(), "perfscope.db")
	cmd := exec.Command(bin, "bench", "--count", "1000", "--benchtime", "200x", "-o", out, "--db", db, ".")
	cmd.Dir = repo.dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The first result line, then the signal: polled, since the file is
	// all there is to watch. It is written under its partial name.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		data, _ := os.ReadFile(out + bench.PartialSuffix)
		if strings.Count(string(data), "BenchmarkWork") >= 2 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("bench ended before it was interrupted: %v\n%s", err, stderr.String())
		case <-tick.C:
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := <-exited; !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("interrupted bench: %v, want exit status 130\n%s", err, stderr.String())
	}
	if _, err := os.Stat(out + bench.PartialSuffix); err == nil {
		t.Error("the interrupted run left its partial file")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	results, err := bench.Parse(bytes.NewReader(data), out)
	if err != nil || len(results.Results) < 2 || len(results.Warnings) > 0 {
		t.Fatalf("results file after SIGINT: %v, warnings %v\n%s", err, results.Warnings, data)
	}
	if !strings.HasSuffix(string(data), "\ninterrupted: true\n") {
		t.Errorf("results file after SIGINT does not end with the interrupted line:\n%s", data)
	}
	// Compared with itself, the file reads as any other: one table, no
	// warning.
	if cmp, code := perfCLI(t, "compare", out, out); code != 0 || strings.Contains(cmp, "warning") || strings.Contains(cmp, "interrupted") {
		t.Errorf("perfscope compare of the interrupted file with itself: exit %d\n%s", code, cmp)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	commits, err := st.Commits(context.Background(), store.Filter{})
	if err != nil || len(commits) != 1 || commits[0].Interrupted != 1 {
		t.Errorf("store holds commits %+v (%v); want the interrupted run's, marked interrupted", commits, err)
	}
}
